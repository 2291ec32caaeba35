"""Downloads: a stream of known length offered under a file name, and a download
answered from a file opened before the answer starts.

Starlette's ``FileResponse`` takes a path, sends the headers (the length from a stat)
and opens the file afterwards: a cached file replaced meanwhile (a newer state of the
record removes the older one) leaves the client with headers and no body. Here the
descriptor is the answer's, from the first byte to the last.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import BinaryIO

from starlette.background import BackgroundTask
from starlette.responses import StreamingResponse

CHUNK = 256 * 1024


def _chunks(file: BinaryIO) -> Iterator[bytes]:
    try:
        while chunk := file.read(CHUNK):
            yield chunk
    finally:
        file.close()


def download_response(
    chunks: Iterator[bytes],
    size: int,
    media_type: str,
    filename: str,
    background: BackgroundTask | None = None,
) -> StreamingResponse:
    """*chunks* (*size* bytes in all) as a download named *filename*; a plain iterator
    is read in the thread pool."""
    return StreamingResponse(
        chunks,
        media_type=media_type,
        headers={
            "Content-Length": str(size),
            "Content-Disposition": f'attachment; filename="{filename}"',
        },
        background=background,
    )


def open_file_response(file: BinaryIO, media_type: str, filename: str) -> StreamingResponse:
    """*file* (opened, read from its start) as a download named *filename*; closed once
    sent, or when the client goes."""
    size = os.fstat(file.fileno()).st_size
    # HEAD sends no body: the file is closed all the same.
    return download_response(
        _chunks(file), size, media_type, filename, background=BackgroundTask(file.close)
    )
