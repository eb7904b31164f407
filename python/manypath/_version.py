"""The installed version, as ``manypath.__version__``."""

from .provenance import version

__version__ = version()
