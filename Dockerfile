# kafka-shim in a container.
#
#   docker build -t kafka-shim .
#   docker run -p 9092:9092 -p 8080:8080 -v kafka-shim-data:/data kafka-shim
#       # clients: localhost:9092; the console: http://localhost:8080/console
#   docker run -p 29092:29092 -e KAFKA_ADVERTISED_LISTENERS=PLAINTEXT://localhost:29092 kafka-shim
#
# BASE_IMAGE: any Debian-like image with python3 (>= 3.11) and its venv module. CI builds
# from a local Debian image (docker/base-image.sh) where no image registry is reachable.
ARG BASE_IMAGE=python:3.11-slim
FROM ${BASE_IMAGE}

# A venv works the same on python:3.11-slim and on Debian's own python3 (whose system
# site-packages pip may not touch). Dependencies first, read from pyproject.toml, so a
# source change rebuilds only the small last layer.
ENV PATH=/opt/kafka-shim/bin:$PATH PYTHONUNBUFFERED=1
COPY pyproject.toml /src/
RUN python3 -m venv /opt/kafka-shim \
    && python3 -c "import tomllib; print('\n'.join(tomllib.load(open('/src/pyproject.toml', 'rb'))['project']['dependencies']))" > /src/requirements.txt \
    && pip install --no-cache-dir --disable-pip-version-check -r /src/requirements.txt
COPY README.md /src/
COPY kafka_shim /src/kafka_shim
RUN pip install --no-cache-dir --disable-pip-version-check --no-deps /src && rm -rf /src \
    && useradd --system --uid 1000 --user-group --home-dir /data --no-create-home kafka-shim \
    && mkdir /data && chown kafka-shim:kafka-shim /data

USER kafka-shim
# Topics, records and committed offsets live here and survive container restarts.
VOLUME /data
# 9092: clients on the host through `-p 9092:9092`, told to connect to localhost:9092.
# 19092: other containers on the same Docker network, told the container's own host name.
# 8080: the web console and /metrics, on every interface of the container (kafka_shim/shim/cli/container.py).
# 9094: the test broker's control endpoint, when started with `--control 0.0.0.0:9094`.
EXPOSE 9092 19092 8080 8081 9094
# Configured as apache/kafka's image is: KAFKA_* variables are broker configs (KAFKA_ADVERTISED_LISTENERS,
# KAFKA_NUM_PARTITIONS, ...); arguments after the image name are added to that (kafka_shim/shim/cli/container.py).
# kafka-shim is PID 1: it stops cleanly on SIGTERM (`docker stop`), flushing /data.
ENTRYPOINT ["kafka-shim", "container"]
CMD []
# Healthy once the first listener answers ApiVersions (compose's depends_on: service_healthy).
HEALTHCHECK --interval=2s --timeout=3s --start-period=10s --retries=5 CMD ["kafka-shim", "healthcheck"]
