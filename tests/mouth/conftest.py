"""Makes the `openai_fake`, `small_tmpfs` and `slow_fsync` fixtures available to these tests."""

from tests.fakes.openai.fixtures import openai_fake  # noqa: F401
from tests.faults import small_tmpfs  # noqa: F401
from tests.play.test_off_the_loop import slow_fsync  # noqa: F401
