module github.com/ringflake/ringflake

go 1.24.0

require (
	github.com/benbjohnson/clock v1.3.5
	github.com/stretchr/testify v1.12.1
	golang.org/x/sync v0.19.0
)

require go.yaml.in/yaml/v3 v3.0.5
