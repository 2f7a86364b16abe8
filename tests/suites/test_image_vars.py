"""promptfoo's image variables (``file://photo.jpg``): the file as a ``data:`` URI, its media
type from its bytes as promptfoo 0.123.1 tells it (measured:
tests/conformance/promptfoo/image_parts.yaml runs both tools on them)."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.formatting import ImagePart
from app.suites.files.image_data import image_data_uri, media_type
from app.suites.loader import SuiteReport, check_suite
from tests.suites.helpers import errors_by_path, source

DOT = Path(__file__).resolve().parents[1] / "conformance/promptfoo/image_files/dot.png"
PROMPT = [{"role": "user", "content": [
    {"type": "text", "text": "What is it?"},
    {"type": "image_url", "image_url": {"url": "{{image}}"}},
]}]  # fmt: skip


async def read(root: Path, image: str, **settings: Any) -> SuiteReport:
    folder = root / "evals"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "photo.jpg").write_bytes(DOT.read_bytes())  # PNG bytes, a .jpg name
    (folder / "prompt.json").write_text(json.dumps(PROMPT))
    suite = {"prompts": ["file://prompt.json"], "providers": ["t"],
             "tests": [{"vars": {"image": image}}]}  # fmt: skip
    (folder / "promptfooconfig.yaml").write_text(json.dumps(suite))
    return await check_suite(
        "evals/promptfooconfig.yaml", file_source=source(roots=[root]), **settings
    )


async def test_an_image_variable_is_its_data_uri_in_the_image_part(tmp_path: Path) -> None:
    report = await read(tmp_path, "file://photo.jpg")
    assert report.suite is not None, report.errors
    [case] = report.suite.cases
    content = case.input_messages[-1].content
    assert isinstance(content, list)
    image = content[-1]
    assert isinstance(image, ImagePart)
    encoded = base64.b64encode(DOT.read_bytes()).decode()
    assert image.url == f"data:image/png;base64,{encoded}"


async def test_an_image_by_url_from_a_variable_needs_the_operator(tmp_path: Path) -> None:
    url = "https://images.example/cat.jpg"
    refused = errors_by_path(await read(tmp_path, url))
    assert "EVAL_IMAGE_URLS=true" in refused["tests[0]"]
    assert (await read(tmp_path, url, image_urls=True)).errors == []


async def test_a_variable_that_is_no_image_url_is_refused_naming_the_part(tmp_path: Path) -> None:
    errors = errors_by_path(await read(tmp_path, "a cat"))
    (where,) = errors
    assert where.endswith("content[1]")
    assert "http(s) URL or a data:image URI, not 'a cat'" in errors[where]


@pytest.mark.parametrize(
    ("head", "kind"),
    [
        (b"\x89PNG\r\n\x1a\n....", "image/png"),
        (b"\xff\xd8\xff\xe0", "image/jpeg"),
        (b"GIF89a", "image/gif"),
        (b"RIFF\x00\x00\x00\x00WEBPVP8 ", "image/webp"),
        (b"BM....", "image/bmp"),
        (b"II*\x00", "image/tiff"),
        (b'<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg"/>', "image/svg+xml"),
    ],
)
def test_the_media_type_comes_from_the_bytes_whatever_the_name(head: bytes, kind: str) -> None:
    assert media_type(head, "x.png") == kind


@given(st.binary(max_size=64).filter(lambda data: not data.startswith((b"BM", b"GIF", b"II"))))
def test_unknown_bytes_take_the_names_type_and_round_trip(data: bytes) -> None:
    uri = image_data_uri(b"\x00" + data, "x.webp")
    assert uri.startswith("data:image/webp;base64,")
    assert base64.b64decode(uri.split(",", 1)[1]) == b"\x00" + data
