// Command steward is Steward's single binary: the controller manager and
// the command-line tools. Each subcommand turns flags into options and
// calls into internal/; no logic lives here.
//
// Usage:
//
//	steward controller             # the controller manager (what the Helm chart runs)
//	steward dev                    # a local control plane and the controller (make run)
//	steward render -f app.yaml -d config/definitions
//	steward status shop -n prod
//	steward dashboard
//
// Files, one per command (each turns flags into the options of
// internal/cli, internal/dashboard, internal/localcp or
// internal/controller/manager):
//
//	main.go        the root command, and the logger every command sets up
//	cluster.go     steward cluster join|list|detach
//	completion.go  argument completion (app and cluster names) and the -o flag
//	controller.go  steward controller
//	dashboard.go   steward dashboard
//	dev.go         steward dev (and its deprecated name, up)
//	diff.go        steward diff (exits 0, 1 or 2 like kubectl diff), and the exit code an error carries
//	history.go     steward history
//	ls.go          steward ls
//	render.go      steward render
//	rollback.go    steward rollback
//	status.go      steward status
//	tree.go        steward tree
//	version.go     steward version
//	workflow.go    steward workflow suspend|resume|terminate|restart|status
package main
