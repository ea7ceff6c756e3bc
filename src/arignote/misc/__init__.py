"""Theano's ``misc`` helpers: ``pkl_utils`` (pickling models into zip files)."""
