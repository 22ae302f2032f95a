module github.com/ringflake/ringflake/cmd/ringflake

go 1.24.0

require (
	github.com/jackc/pgx/v5 v5.8.0 // v5.9 and later need go 1.25
	github.com/redis/go-redis/v9 v9.22.0
	github.com/ringflake/ringflake v0.1.0
	github.com/ringflake/ringflake/chronyhealth v0.1.0
	github.com/ringflake/ringflake/etcdlease v0.1.0
	github.com/ringflake/ringflake/pglease v0.1.0
	github.com/ringflake/ringflake/redislease v0.1.0
	github.com/ringflake/ringflake/ringflakeprom v0.1.0
	github.com/stretchr/testify v1.12.1
)

require (
	github.com/prometheus/client_model v0.6.2
	github.com/prometheus/common v0.66.1
)

require (
	github.com/benbjohnson/clock v1.3.5 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/jackc/pgpassfile v1.0.0 // indirect
	github.com/jackc/pgservicefile v0.0.0-20240606120523-5a60cdf6a761 // indirect
	github.com/jackc/puddle/v2 v2.2.2 // indirect
	github.com/kr/pretty v0.3.1 // indirect
	github.com/munnerz/goautoneg v0.0.0-20191010083416-a7dc8b61c822 // indirect
	github.com/ringflake/ringflake/segment v0.1.0 // indirect
	go.uber.org/atomic v1.11.0 // indirect
	go.yaml.in/yaml/v2 v2.4.2 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/sync v0.19.0 // indirect
	golang.org/x/sys v0.35.0 // indirect
	golang.org/x/text v0.29.0 // indirect
	google.golang.org/protobuf v1.36.8 // indirect
)

replace (
	github.com/ringflake/ringflake => ../..
	github.com/ringflake/ringflake/chronyhealth => ../../chronyhealth
	github.com/ringflake/ringflake/etcdlease => ../../etcdlease
	github.com/ringflake/ringflake/pglease => ../../pglease
	github.com/ringflake/ringflake/redislease => ../../redislease
	github.com/ringflake/ringflake/ringflakeprom => ../../ringflakeprom
	github.com/ringflake/ringflake/segment => ../../segment
)
