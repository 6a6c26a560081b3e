"""toymodels: faithful toy models of the NeurIPS 2025 best papers.

One module per paper (see ``toymodels.registry``), plus ``device`` (where tensors
live, seeding), ``store`` (shipped results and the disk cache) and ``cli``
(``python -m toymodels``). This package never imports Streamlit.
"""
from typing import Callable, Optional

__version__ = "0.1.0"

#: The progress callback every long computation accepts: ``progress(fraction, message)``
#: with ``fraction`` in [0, 1]. Pages drive ``st.progress`` with it, the CLI a tqdm bar.
Progress = Optional[Callable[[float, str], None]]


def report(progress: Progress, fraction: float, message: str = "") -> None:
    """Call ``progress`` if one was given, clamping the fraction to [0, 1]."""
    if progress is not None:
        progress(min(1.0, max(0.0, float(fraction))), message)
