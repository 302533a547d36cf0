"""annotator: find out what image-captioning models get wrong.

The core package. Everything here works from plain Python and the CLI; only
``annotator.ui`` (and the app's pages) import Streamlit.
"""

__version__ = "0.1.0"
