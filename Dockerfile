FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
WORKDIR /app
COPY pyproject.toml README.md ./
COPY config ./config
COPY datasets_app ./datasets_app
COPY annotation ./annotation
COPY evaluation ./evaluation
RUN pip install --no-cache-dir .
COPY . .
RUN useradd --create-home timbang && mkdir -p /data && chown timbang /data
USER timbang
EXPOSE 8000
