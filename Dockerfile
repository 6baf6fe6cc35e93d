# kafka-shim in a container: mirrors the README install.
FROM python:3.11-slim
WORKDIR /app
COPY pyproject.toml README.md ./
COPY kafka_shim ./kafka_shim
COPY protocol ./protocol
COPY storage ./storage
COPY shim ./shim
COPY pipeline ./pipeline
RUN pip install --no-cache-dir .
# Topics, records and committed offsets live here and survive container restarts.
VOLUME /data
EXPOSE 9092
CMD ["kafka-shim", "--host", "0.0.0.0", "--port", "9092", "--advertised-host", "localhost", "--data-dir", "/data"]
