// Package cli holds the logic of Steward's command-line tools, so that the
// cobra commands in cmd/steward stay thin (flags -> options -> a function
// here) and the logic is testable without a process.
//
// Usage:
//
//	err := cli.Render(cli.RenderOptions{DefinitionPaths: []string{"config/definitions"},
//		AppFile: "app.yaml", Out: os.Stdout})
//
// Implementation notes: definitions and Applications are read from
// multi-document YAML files; rendering goes through internal/render, the
// same code path as the controller.
package cli
