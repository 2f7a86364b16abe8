"""The text of a PDF file a promptfoo variable names (``file://paper.pdf``).

promptfoo 0.123.1 reads such a variable as the PDF's text (its ``pdf-parse``), which
measured on a two-page file is each page's text, then ``-- i of n --`` on a line of its own
after a blank line, the pages separated by blank lines, the whole trimmed. The text is
extracted here with ``pypdf`` (pure Python, well kept; docs/design.md), so line breaks
inside a page may differ from promptfoo's where the two libraries lay out a page's text
differently. A file that is not a readable PDF is refused with the reason; the file's size
is capped like every referenced file's, and at most ``MAX_PAGES`` pages are read.
"""

from __future__ import annotations

import io
import logging

from app.errors import FileRefused

PDF_SUFFIX = ".pdf"
MAX_PAGES = 500
"""Most pages of one PDF variable (a bound on the work one referenced file may ask for)."""


def is_pdf(path: str) -> bool:
    """Whether a referenced file is read as a PDF (by its name, as promptfoo tells)."""
    return path.lower().endswith(PDF_SUFFIX)


def pdf_text(data: bytes) -> str:
    """The text of the PDF ``data`` in promptfoo's layout (see the module).

    Raises:
        FileRefused: The bytes are not a PDF pypdf can read, or it has too many pages.
    """
    # Imported here: pypdf took 80 ms of every start of the service, which rarely reads a PDF.
    from pypdf import PdfReader
    from pypdf.errors import PyPdfError

    logging.getLogger("pypdf").setLevel(logging.ERROR)  # its warnings are about the file
    try:
        reader = PdfReader(io.BytesIO(data))
        count = len(reader.pages)
        if count > MAX_PAGES:
            raise FileRefused(f"the PDF has {count} pages, more than the limit of {MAX_PAGES}")
        pages = [page.extract_text() or "" for page in reader.pages]
    except (PyPdfError, ValueError, KeyError, TypeError) as exc:
        raise FileRefused(f"the file is not a readable PDF: {exc}") from None
    parts = [
        f"{text.rstrip()}\n\n-- {number} of {count} --\n\n" for number, text in enumerate(pages, 1)
    ]
    return "".join(parts).strip()
