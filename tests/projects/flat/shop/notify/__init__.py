"""A package that re-exports an object named like its own submodule."""

from .mailer import mailer as mailer
