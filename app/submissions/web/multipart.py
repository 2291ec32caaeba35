"""Streaming multipart parsing: the archive goes straight to the upload sink.

Starlette's form parser spools files to the system temp directory with no size
limit; an upload here is written only into the data directory, hashed as it arrives,
and cut off as soon as it passes the limit.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from python_multipart.exceptions import MultipartParseError
from python_multipart.multipart import MultipartParser, parse_options_header
from starlette.requests import Request

from app.submissions.services.storage import ReceivedFile, UploadSink

_MAX_FIELD_BYTES = 4096


class MultipartError(Exception):
    def __init__(self, code: str, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = status


@dataclass
class _Part:
    """The part of the form being read."""

    headers: dict[bytes, bytes] = field(default_factory=dict)
    name: str | None = None
    filename: str | None = None
    buf: bytearray = field(default_factory=bytearray)


@dataclass
class ParsedUpload:
    file: ReceivedFile | None = None
    filename: str | None = None
    fields: dict[str, str] = field(default_factory=dict)


async def receive_upload(
    request: Request, sink: UploadSink, file_field: str = "file"
) -> ParsedUpload:
    """Parse the request body; the part named *file_field* is written to *sink*."""
    content_type, params = parse_options_header(request.headers.get("content-type", ""))
    if content_type != b"multipart/form-data" or b"boundary" not in params:
        raise MultipartError(
            "not-multipart",
            "send the archive as multipart/form-data with a part named 'file'",
            415,
        )
    result = ParsedUpload()
    part = _Part()
    header_field = bytearray()
    header_value = bytearray()

    def on_part_begin() -> None:
        nonlocal part
        part = _Part()

    def on_header_field(data: bytes, start: int, end: int) -> None:
        header_field.extend(data[start:end])

    def on_header_value(data: bytes, start: int, end: int) -> None:
        header_value.extend(data[start:end])

    def on_header_end() -> None:
        part.headers[bytes(header_field).lower()] = bytes(header_value)
        header_field.clear()
        header_value.clear()

    def on_headers_finished() -> None:
        disposition = part.headers.get(b"content-disposition", b"")
        _, options = parse_options_header(disposition)
        name = options.get(b"name", b"").decode("utf-8", "replace")
        part.name = name
        if b"filename" in options:
            part.filename = options[b"filename"].decode("utf-8", "replace")
            if name == file_field and result.filename is not None:
                raise MultipartError("several-files", "send exactly one archive per upload")

    def on_part_data(data: bytes, start: int, end: int) -> None:
        chunk = data[start:end]
        if part.name == file_field and part.filename is not None:
            sink.write(chunk)
            return
        part.buf.extend(chunk)
        if len(part.buf) > _MAX_FIELD_BYTES:
            raise MultipartError("field-too-large", f"form field {part.name!r} is too long", 413)

    def on_part_end() -> None:
        if part.name == file_field and part.filename is not None:
            result.filename = part.filename
        elif part.name:
            result.fields[part.name] = bytes(part.buf).decode("utf-8", "replace")

    parser = MultipartParser(
        params[b"boundary"],
        {
            "on_part_begin": on_part_begin,
            "on_part_data": on_part_data,
            "on_part_end": on_part_end,
            "on_header_field": on_header_field,
            "on_header_value": on_header_value,
            "on_header_end": on_header_end,
            "on_headers_finished": on_headers_finished,
        },
    )
    try:
        async for chunk in request.stream():
            parser.write(chunk)
        parser.finalize()
    except MultipartParseError as exc:  # an oversized part header, a broken boundary, …
        raise MultipartError("bad-multipart", f"the multipart body is malformed: {exc}") from exc
    if result.filename is None:
        raise MultipartError("no-file", f"the form has no file part named {file_field!r}")
    result.file = sink.finish()
    return result
