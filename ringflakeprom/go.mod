module github.com/ringflake/ringflake/ringflakeprom

go 1.24.0

require (
	github.com/prometheus/client_golang v1.23.2
	github.com/prometheus/client_model v0.6.2
	github.com/prometheus/common v0.66.1
	github.com/ringflake/ringflake v0.1.0
	github.com/ringflake/ringflake/segment v0.1.0
	github.com/stretchr/testify v1.12.1
	google.golang.org/protobuf v1.36.8
)

require (
	github.com/benbjohnson/clock v1.3.5 // indirect
	github.com/beorn7/perks v1.0.1 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/kr/text v0.2.0 // indirect
	github.com/kylelemons/godebug v1.1.0 // indirect
	github.com/munnerz/goautoneg v0.0.0-20191010083416-a7dc8b61c822 // indirect
	github.com/prometheus/procfs v0.16.1 // indirect
	go.yaml.in/yaml/v2 v2.4.2 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/sys v0.35.0 // indirect
)

replace (
	github.com/ringflake/ringflake => ../
	github.com/ringflake/ringflake/segment => ../segment
)
