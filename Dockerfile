# syntax=docker/dockerfile:1
#
# The fideliza binary in a small non-root image. Build and try it with demo data:
#
#   docker build -t fideliza .
#   docker run --rm -p 8080:8080 -v fideliza-data:/data fideliza serve --demo
#
# Production runs on PostgreSQL: set FIDELIZA_DATABASE_URL=postgres://… and FIDELIZA_PUBLIC_URL (docs/deploy.md).

# go.mod asks for Go 1.26.8: golang:1.26 follows the latest 1.26 patch release.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
# modernc.org/sqlite is pure Go: the binary is static and needs no C library.
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o /out/fideliza ./cmd/fideliza \
 && mkdir -p /out/data

# distroless/static: CA certificates (webhooks, the SSO provider) and time zones, no shell; user nonroot (65532).
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/fideliza /usr/local/bin/fideliza
# The embedded database's directory, writable by the service's user.
COPY --from=build --chown=65532:65532 /out/data /data
ENV FIDELIZA_DATABASE_URL=sqlite:///data/fideliza.db \
    FIDELIZA_ADDR=0.0.0.0:8080 \
    FIDELIZA_PUBLIC_URL=http://localhost:8080
VOLUME /data
EXPOSE 8080
# Numeric, so that runAsNonRoot checks can verify it.
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/fideliza"]
CMD ["serve", "--addr", "0.0.0.0:8080"]
