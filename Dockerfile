# syntax=docker/dockerfile:1

# The runtime image of function-inferno, for users with Docker. Tests build
# the same image without Docker (see `make xpkg`).
#
#   docker buildx build --platform linux/amd64,linux/arm64 -t function-inferno-runtime .

FROM --platform=${BUILDPLATFORM} golang:1.26 AS build
WORKDIR /src
ENV CGO_ENABLED=0
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
ARG TARGETOS
ARG TARGETARCH
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    GOOS=${TARGETOS} GOARCH=${TARGETARCH} go build -trimpath -ldflags='-s -w' -o /function .

FROM gcr.io/distroless/static-debian12:nonroot AS image
COPY --from=build /function /function
EXPOSE 9443
USER nonroot:nonroot
ENTRYPOINT ["/function"]
