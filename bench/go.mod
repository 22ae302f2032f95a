module github.com/ringflake/ringflake/bench

go 1.24.0

replace github.com/ringflake/ringflake => ../

require (
	github.com/bwmarrin/snowflake v0.3.0
	github.com/google/uuid v1.6.0
	github.com/oklog/ulid/v2 v2.1.2
	github.com/ringflake/ringflake v0.1.0
	github.com/rs/xid v1.6.0
	github.com/sony/sonyflake/v2 v2.2.0
	github.com/stretchr/testify v1.12.1
)

require (
	github.com/benbjohnson/clock v1.3.5 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
)
