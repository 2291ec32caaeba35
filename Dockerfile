# One image for web, worker and migrations: the portal's wheel, installed with the
# pinned tree. The wheel carries the templates, static files and migrations.
FROM python:3.11-slim AS wheel
WORKDIR /src
COPY pyproject.toml README.md ./
COPY app ./app
COPY worker ./worker
COPY harness ./harness
COPY migrations ./migrations
COPY templates ./templates
COPY static ./static
RUN pip wheel --no-cache-dir --no-deps -w /dist .

FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 \
    ENDPOINTS_PORTAL_DATA_DIR=/data
WORKDIR /srv/portal
COPY requirements.lock ./
COPY --from=wheel /dist /dist
RUN pip install --no-cache-dir -c requirements.lock /dist/*.whl \
    && rm -rf /dist \
    && useradd --system --home /srv/portal portal \
    && mkdir -p /data && chown portal /data
USER portal
EXPOSE 8000
CMD ["endpoints-portal", "web", "--host", "0.0.0.0", "--port", "8000"]
