from hlotop.model.types import *  # noqa: F401,F403
from hlotop.model.types import _instruction_reader  # noqa: F401
