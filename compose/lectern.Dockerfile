# Builds the lectern binary; every role runs from this image.
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -o /out/lectern ./cmd/lectern

FROM debian:bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates && rm -rf /var/lib/apt/lists/*
COPY --from=build /out/lectern /usr/local/bin/lectern
RUN useradd --system --create-home lectern && mkdir -p /var/lib/lectern && chown lectern /var/lib/lectern
USER lectern
EXPOSE 8080 8081
ENTRYPOINT ["lectern"]
CMD ["all"]
