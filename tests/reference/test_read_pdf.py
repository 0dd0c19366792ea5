"""Read of PDFs (SPEC.md section 16, PDF-*) through the protocol engine, on a real disk."""

from __future__ import annotations

import base64
import io
import os
from pathlib import Path
from typing import Any

import pytest
from pypdf import PdfReader
from refsupport import (
    Call,
    assert_done,
    assert_refused,
    error_text,
    forbid_file_reads,
    record_of,
)

from reference import errors, fileio
from reference.engine import Engine
from reference.tools.read import pdf as read_pdf

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
PDFS = FIXTURES / "pdf"
THREE = PDFS / "three.pdf"
TWENTY_FIVE = PDFS / "twenty-five.pdf"


def sent_pdf(response: dict[str, Any]) -> bytes:
    """The document the model receives, from the one document block."""
    blocks = response["tool_result"]["content"]
    assert isinstance(blocks, list)
    assert len(blocks) == 1
    assert blocks[0]["type"] == "document"
    assert blocks[0]["source"]["type"] == "base64"
    assert blocks[0]["source"]["media_type"] == "application/pdf"
    return base64.b64decode(blocks[0]["source"]["data"])


def page_texts(data: bytes) -> list[str]:
    return [page.extract_text() for page in PdfReader(io.BytesIO(data)).pages]


def invalid_pages(value: str) -> str:
    return (
        f'Invalid pages parameter: "{value}". Use a page number such as "3" or a range such '
        'as "1-5".'
    )


# --- PDF-PAGES-1, PDF-PAGES-2 ----------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "first", "last"),
    [("3", 3, 3), ("1-5", 1, 5), (" 2-4 ", 2, 4), ("\t7\n", 7, 7), ("05-06", 5, 6), ("4-4", 4, 4)],
)
def test_pages_is_a_number_or_a_range(value: str, first: int, last: int) -> None:
    """SPEC: PDF-PAGES-1"""
    assert read_pdf.parse_pages(value) == (first, last)


@pytest.mark.parametrize(
    "value", ["", " ", "0", "0-3", "3-2", "1 - 5", "1-", "-5", "1,3", "a", "1-5-7", "+1", "١"]
)
def test_malformed_pages_are_refused_with_code_7(call: Call, value: str) -> None:
    """SPEC: PDF-PAGES-1, READ-VALIDATE-1"""
    response = call("Read", file_path=str(THREE), pages=value)
    assert_refused(response, stage="validate", code=7, name="InvalidPagesError")
    assert error_text(response) == invalid_pages(value)


@pytest.mark.parametrize("name", ["notes.txt", "small.png", "empty.pdf", "book.ipynb"])
def test_pages_on_a_file_that_is_not_a_pdf_is_ignored(
    tmp_path: Path, call: Call, name: str
) -> None:
    """SPEC: PDF-PAGES-1, IMG-DETECT-1"""
    contents = {
        "notes.txt": b"hello\n",
        "small.png": (FIXTURES / "images" / "small.png").read_bytes(),
        "empty.pdf": b"",  # an empty file is text, whatever its name
        "book.ipynb": b'{"cells": []}',
    }
    path = tmp_path / name
    path.write_bytes(contents[name])
    with_pages = call("Read", file_path=str(path), pages="1")
    assert_done(with_pages)
    assert with_pages["outcome"]["output"]["type"] != "pdf"
    path.write_bytes(contents[name])  # a new mtime: no dedup stub for the read without pages
    os.utime(path, ns=(1_000_000_000, 1_000_000_000))
    without = call("Read", file_path=str(path))
    assert_done(without)
    assert with_pages["tool_result"]["content"] == without["tool_result"]["content"]


def test_pages_on_dev_null_is_ignored(call: Call) -> None:
    """SPEC: PDF-PAGES-1"""
    response = call("Read", file_path="/dev/null", pages="1")
    assert_done(response)
    assert response["outcome"]["output"]["file"]["content"] == ""


def test_pages_comes_after_the_other_checks(tmp_path: Path, call: Call) -> None:
    """SPEC: READ-VALIDATE-1, PDF-PAGES-1"""
    missing = call("Read", file_path=str(tmp_path / "gone.pdf"), pages="x")
    assert_refused(missing, stage="validate", code=5, name="FileDoesNotExistError")
    directory = call("Read", file_path=str(tmp_path), pages="x")
    assert_refused(directory, stage="validate", code=6, name="NotARegularFileError")


def test_more_than_20_pages_is_refused_with_code_7(call: Call) -> None:
    """SPEC: PDF-PAGES-2"""
    response = call("Read", file_path=str(TWENTY_FIVE), pages=" 3-23")
    assert_refused(response, stage="validate", code=7, name="InvalidPagesError")
    assert error_text(response) == (
        'Page range " 3-23" has 21 pages; at most 20 pages can be read per call.'
    )


def test_the_page_limit_holds_past_the_end_of_the_document(call: Call) -> None:
    """SPEC: PDF-PAGES-2, PDF-RANGE-1"""
    response = call("Read", file_path=str(THREE), pages="1-21")
    assert_refused(response, stage="validate", code=7, name="InvalidPagesError")


def test_exactly_20_pages_are_sent(call: Call) -> None:
    """SPEC: PDF-PAGES-2, PDF-SEND-1"""
    response = call("Read", file_path=str(TWENTY_FIVE), pages="6-25")
    assert_done(response)
    assert page_texts(sent_pdf(response)) == [f"Page {n} of 25" for n in range(6, 26)]


# --- PDF-OPEN-1 ---------------------------------------------------------------------


def test_a_pdf_that_does_not_parse_is_invalid_with_pages(call: Call) -> None:
    """SPEC: PDF-OPEN-1, IMG-DETECT-1"""
    whole = assert_done(call("Read", file_path=str(PDFS / "broken.pdf")))
    assert whole["file"]["numPages"] is None  # sent as it is
    response = call("Read", file_path=str(PDFS / "broken.pdf"), pages="1")
    assert_refused(response, stage="call", name="InvalidPdfError")
    assert error_text(response) == (
        "The PDF file was not valid. Try converting it to text first (e.g., pdftotext)."
    )


def test_a_damaged_pdf_name_gets_the_pdf_error_not_the_binary_one(
    tmp_path: Path, call: Call
) -> None:
    """SPEC: IMG-DETECT-1, PDF-OPEN-1"""
    path = tmp_path / "SCAN.PDF"
    path.write_bytes(b"\x00\x01\x02 not a pdf at all")
    response = call("Read", file_path=str(path), pages="1")
    assert_refused(response, stage="call", name="InvalidPdfError")


@pytest.mark.parametrize("pages", ["1", "1-2"])
def test_an_encrypted_pdf_is_password_protected_with_pages(call: Call, pages: str) -> None:
    """SPEC: PDF-OPEN-1"""
    assert_done(call("Read", file_path=str(PDFS / "encrypted.pdf")))  # whole: sent as it is
    response = call("Read", file_path=str(PDFS / "encrypted.pdf"), pages=pages)
    assert_refused(response, stage="call", name="PdfPasswordProtectedError")
    assert error_text(response) == (
        "PDF is password protected. Try using a CLI tool to extract or convert the PDF."
    )


# --- PDF-REQUIRE-1, PDF-RANGE-1 -------------------------------------------------------


def test_ten_pages_are_read_whole(call: Call) -> None:
    """SPEC: PDF-REQUIRE-1, PDF-SEND-1"""
    output = assert_done(call("Read", file_path=str(PDFS / "ten.pdf")))
    assert output["file"]["numPages"] == 10


def test_more_than_ten_pages_need_the_pages_parameter(call: Call) -> None:
    """SPEC: PDF-REQUIRE-1"""
    response = call("Read", file_path=str(PDFS / "eleven.pdf"))
    assert_refused(response, stage="call", name="PdfPagesRequiredError")
    assert error_text(response) == (
        "This PDF has 11 pages, which is more than 10. Read it in ranges with the pages "
        'parameter (for example pages: "1-5"), at most 20 pages per call.'
    )


def test_a_range_starting_past_the_last_page_is_out_of_range(call: Call) -> None:
    """SPEC: PDF-RANGE-1"""
    response = call("Read", file_path=str(THREE), pages="4-5")
    assert_refused(response, stage="call", name="PdfPageOutOfRangeError")
    assert error_text(response) == "Page 4 is out of range: the PDF has 3 pages."


def test_a_range_ending_past_the_last_page_is_cut(call: Call) -> None:
    """SPEC: PDF-RANGE-1, PDF-SEND-1"""
    response = call("Read", file_path=str(TWENTY_FIVE), pages="23-30")
    output = assert_done(response)
    assert output["file"]["pages"] == "23-30"
    assert page_texts(sent_pdf(response)) == ["Page 23 of 25", "Page 24 of 25", "Page 25 of 25"]


def test_the_last_page_alone(call: Call) -> None:
    """SPEC: PDF-RANGE-1, PDF-PAGES-1"""
    response = call("Read", file_path=str(THREE), pages="3")
    assert page_texts(sent_pdf(response)) == ["Page 3 of 3"]


# --- PDF-SEND-1 ---------------------------------------------------------------------


def test_a_whole_read_sends_the_file_unchanged(call: Call) -> None:
    """SPEC: PDF-SEND-1"""
    response = call("Read", file_path=str(THREE))
    data = THREE.read_bytes()
    assert sent_pdf(response) == data
    assert assert_done(response) == {
        "type": "pdf",
        "file": {
            "filePath": str(THREE),
            "base64": base64.b64encode(data).decode("ascii"),
            "originalSize": len(data),
            "numPages": 3,
            "pages": None,
        },
    }


def test_pages_send_a_new_pdf_of_exactly_those_pages(call: Call) -> None:
    """SPEC: PDF-SEND-1"""
    response = call("Read", file_path=str(TWENTY_FIVE), pages="2-4")
    output = assert_done(response)
    sent = sent_pdf(response)
    assert page_texts(sent) == ["Page 2 of 25", "Page 3 of 25", "Page 4 of 25"]
    assert output["file"] == {
        "filePath": str(TWENTY_FIVE),
        "base64": base64.b64encode(sent).decode("ascii"),
        "originalSize": TWENTY_FIVE.stat().st_size,
        "numPages": 25,
        "pages": "2-4",
    }


def test_pages_covering_the_whole_document_still_send_a_new_pdf(call: Call) -> None:
    """SPEC: PDF-SEND-1"""
    sent = sent_pdf(call("Read", file_path=str(THREE), pages="1-3"))
    assert page_texts(sent) == ["Page 1 of 3", "Page 2 of 3", "Page 3 of 3"]


def test_a_pdf_signature_under_another_name_is_a_pdf(tmp_path: Path, call: Call) -> None:
    """SPEC: IMG-DETECT-1, PDF-SEND-1"""
    path = tmp_path / "report.bin"
    path.write_bytes(THREE.read_bytes())
    assert sent_pdf(call("Read", file_path=str(path), pages="2")) != THREE.read_bytes()
    assert assert_done(call("Read", file_path=str(path)))["type"] == "pdf"


def test_pdf_reads_record_nothing_and_never_dedup(engine: Engine, call: Call) -> None:
    """SPEC: IMG-STATE-1"""
    call("Read", file_path=str(THREE))
    second = call("Read", file_path=str(THREE))
    assert second["outcome"]["dedup"] is False
    assert record_of(engine, THREE) is None


# --- PDF-SIZE-1 ---------------------------------------------------------------------


def test_a_whole_pdf_over_20_mib_is_refused_by_stat(
    tmp_path: Path, call: Call, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SPEC: PDF-SIZE-1"""
    path = tmp_path / "huge.pdf"
    with path.open("wb") as handle:
        handle.truncate(20 * 1024 * 1024 + 1)
    forbid_file_reads(monkeypatch)
    monkeypatch.setattr(fileio, "read_head", lambda _p, _n: b"\x00" * 16)
    response = call("Read", file_path=str(path))
    assert_refused(response, stage="call", name="PdfTooLargeError")
    assert error_text(response) == (
        "PDF too large (max 100 pages, 20MB). Try reading the file a different way "
        "(e.g., extract text with pdftotext)."
    )


def test_a_whole_pdf_of_exactly_20_mib_is_not_too_large(tmp_path: Path, call: Call) -> None:
    """SPEC: PDF-SIZE-1"""
    path = tmp_path / "edge.pdf"
    with path.open("wb") as handle:
        handle.truncate(20 * 1024 * 1024)
    assert_done(call("Read", file_path=str(path)))  # sent whole, unparsed (PDF-OPEN-1)


def test_a_subset_over_the_limit_is_too_large(call: Call, monkeypatch: pytest.MonkeyPatch) -> None:
    """SPEC: PDF-SIZE-1"""
    small = assert_done(call("Read", file_path=str(TWENTY_FIVE), pages="1"))
    one_page = len(base64.b64decode(small["file"]["base64"]))
    monkeypatch.setattr(read_pdf, "MAX_SEND_BYTES", one_page)
    assert_done(call("Read", file_path=str(TWENTY_FIVE), pages="1"))
    response = call("Read", file_path=str(TWENTY_FIVE), pages="1-2")
    assert_refused(response, stage="call", name="PdfTooLargeError")


def test_the_pdf_limits() -> None:
    """SPEC: PDF-SIZE-1, PDF-REQUIRE-1, PDF-PAGES-2"""
    assert read_pdf.MAX_SEND_BYTES == 20_971_520
    assert read_pdf.MAX_PAGES_WITHOUT_RANGE == 10
    assert read_pdf.MAX_PAGES_PER_CALL == 20


def test_pdf_errors_are_call_errors() -> None:
    """SPEC: ERR-CODE-2, PDF-OPEN-1"""
    for error in (
        errors.InvalidPdfError,
        errors.PdfPasswordProtectedError,
        errors.PdfPagesRequiredError,
        errors.PdfPageOutOfRangeError,
        errors.PdfTooLargeError,
    ):
        assert issubclass(error, errors.ToolCallError)
        assert error.error_name == error.__name__
