# One image for web, worker and migrations.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 \
    ENDPOINTS_PORTAL_DATA_DIR=/data
WORKDIR /srv/portal

COPY pyproject.toml requirements.lock README.md alembic.ini ./
COPY app ./app
COPY worker ./worker
COPY harness ./harness
COPY migrations ./migrations
COPY templates ./templates
COPY static ./static
RUN pip install --no-cache-dir -c requirements.lock -e . \
    && useradd --system --home /srv/portal portal \
    && mkdir -p /data && chown portal /data
# Editable: templates, static files and migrations are found beside the code.
USER portal
EXPOSE 8000
CMD ["uvicorn", "app.web.asgi:app", "--host", "0.0.0.0", "--port", "8000"]
