"""The package's errors: one for bad input anywhere, one for a result that only a computation could give."""


class InputError(ValueError):
    """An argument out of bounds or malformed. The message is written for a person: a page shows it as is."""


class BudgetError(InputError):
    """Every argument inside its bounds, but together over a budget (time, memory): a page shows it as a warning
    naming what to lower, not as an error (a widget offered nothing wrong)."""


class NotStored(LookupError):
    """A view needed while only stored results may be read (a freshness check, a verdict) is not stored."""


class ClaimError(ValueError):
    """A claim or its evidence that breaks the ledger's rules (a programming error, caught by the tests)."""
