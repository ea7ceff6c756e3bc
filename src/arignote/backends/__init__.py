"""Backends: where each Apply node's thunk comes from."""
