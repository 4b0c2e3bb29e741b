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
# With the 'llamacpp' extra, PyPI's xllamacpp wheel runs on CPU. A GPU image names the CUDA index of
# xllamacpp's project (e.g. https://xorbitsai.github.io/xllamacpp/whl/cu128) to get the same version built
# with CUDA instead.
ARG XLLAMACPP_INDEX=""
RUN if [ -n "${XLLAMACPP_INDEX}" ]; then \
      version="$(python -c 'import importlib.metadata as m; print(m.version("xllamacpp"))')" && \
      pip install --no-cache-dir --force-reinstall --no-deps --index-url "${XLLAMACPP_INDEX}" "xllamacpp==${version}"; \
    fi
COPY . .
# The image writes no bytecode at run time (PYTHONDONTWRITEBYTECODE): compile the project once here, so that
# a command or worker does not recompile every module it imports each time it starts.
RUN python -m compileall -q -j 0 accounts analytics annotation config datasets_app demo evaluation exports
RUN useradd --create-home timbang && mkdir -p /data && chown timbang /data
USER timbang
EXPOSE 8000
