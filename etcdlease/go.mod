module github.com/ringflake/ringflake/etcdlease

go 1.24.0

replace github.com/ringflake/ringflake => ../

require (
	github.com/benbjohnson/clock v1.3.5
	github.com/ringflake/ringflake v0.1.0
	github.com/stretchr/testify v1.12.1
	go.etcd.io/etcd/api/v3 v3.5.23
	go.etcd.io/etcd/client/v3 v3.5.23
	go.uber.org/zap v1.27.0
	google.golang.org/grpc v1.71.1
)

require (
	github.com/coreos/go-semver v0.3.0 // indirect
	github.com/coreos/go-systemd/v22 v22.3.2 // indirect
	github.com/gogo/protobuf v1.3.2 // indirect
	github.com/golang/protobuf v1.5.4 // indirect
	go.etcd.io/etcd/client/pkg/v3 v3.5.23 // indirect
	go.uber.org/multierr v1.10.0 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/net v0.38.0 // indirect
	golang.org/x/sync v0.19.0 // indirect
	golang.org/x/sys v0.31.0 // indirect
	golang.org/x/text v0.23.0 // indirect
	google.golang.org/genproto/googleapis/api v0.0.0-20250106144421-5f5ef82da422 // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20250115164207-1a7da9e5054f // indirect
	google.golang.org/protobuf v1.36.4 // indirect
)
