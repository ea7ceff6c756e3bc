"""The ``theano`` alias fixture of tests/compat, for the theano.scalar tests here."""
from tests.compat.conftest import theano  # noqa: F401
