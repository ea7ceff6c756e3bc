"""Theano's ``misc.pkl_utils``: ``dump`` and ``load`` pickle any object (models with
compiled functions included) into a zip file whose arrays are ``.npy`` members.

This is the pickle-based path; loading runs code from the file. For parameters
alone, ``arignote.save`` / ``arignote.load`` write a format whose loading runs none.
``CompatUnpickler`` reads Python 2 pickles of numpy arrays.
The implementation lives in ``arignote.serialization``.
"""
from arignote.serialization import (CompatUnpickler, PersistentNdarrayID, PersistentNdarrayLoad,
                                    PersistentSharedVariableID, StripPickler, dump)
from arignote.serialization import load_pickle as load

__all__ = ["dump", "load", "PersistentNdarrayID", "PersistentSharedVariableID", "PersistentNdarrayLoad",
           "StripPickler", "CompatUnpickler"]
