"""Names ``theano.compile`` carried that ``arignote.compile`` does not re-export."""
from arignote.compat.theano.optdb import optdb
from arignote.compile.builders import OpFromGraph
from arignote.compile.output_copies import DeepCopyOp, deep_copy_op
from arignote.config import config

__all__ = ["config", "OpFromGraph", "optdb", "DeepCopyOp", "deep_copy_op"]
