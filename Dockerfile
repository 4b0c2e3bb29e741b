FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
WORKDIR /app
COPY pyproject.toml README.md ./
COPY config ./config
COPY datasets_app ./datasets_app
COPY annotation ./annotation
COPY evaluation ./evaluation
# Optional extras, e.g. "[gpu]" for the image of GPU workers (vllm, transformers).
ARG EXTRAS=""
RUN pip install --no-cache-dir ".${EXTRAS}"
COPY . .
RUN useradd --create-home timbang && mkdir -p /data && chown timbang /data
USER timbang
EXPOSE 8000
