package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/printers"
	"sigs.k8s.io/yaml"
)

// Output formats of the read-only commands. Listing commands take every
// one; the others (version, status, tree) take the human layout (empty),
// yaml and json.
const (
	OutputTable = "table"
	OutputWide  = "wide"
	OutputYAML  = "yaml"
	OutputJSON  = "json"
	OutputName  = "name"
)

// ListFormats are the -o values of listing commands, as kubectl names them.
var ListFormats = []string{OutputTable, OutputWide, OutputYAML, OutputJSON, OutputName}

// StructuredFormats are the -o values of commands with a human layout of
// their own; empty means that layout.
var StructuredFormats = []string{OutputYAML, OutputJSON}

// listPrinter returns the cli-runtime printer of a listing format: the
// table printer for table and wide (wide shows the columns of priority
// 1), kubectl's json, yaml and name printers otherwise. Objects printed
// as json, yaml or name get their apiVersion and kind from scheme.
func listPrinter(format string, withNamespace bool, scheme *runtime.Scheme) (printers.ResourcePrinter, error) {
	switch format {
	case "", OutputTable, OutputWide:
		return printers.NewTablePrinter(printers.PrintOptions{WithNamespace: withNamespace, Wide: format == OutputWide}), nil
	case OutputYAML, OutputJSON, OutputName:
		pf := genericclioptions.NewPrintFlags("").WithTypeSetter(scheme)
		pf.OutputFormat = &format
		return pf.ToPrinter()
	}
	return nil, unknownFormat(format, ListFormats)
}

// printStructured writes v as YAML or JSON, for commands whose result is
// not a Kubernetes object.
func printStructured(out io.Writer, format string, v any) error {
	switch format {
	case OutputJSON:
		raw, err := json.MarshalIndent(v, "", "    ")
		if err != nil {
			return fmt.Errorf("encoding JSON: %w", err)
		}
		_, err = fmt.Fprintf(out, "%s\n", raw)
		return err
	case OutputYAML:
		raw, err := yaml.Marshal(v)
		if err != nil {
			return fmt.Errorf("encoding YAML: %w", err)
		}
		_, err = out.Write(raw)
		return err
	}
	return unknownFormat(format, StructuredFormats)
}

// checkStructured accepts the formats of a command with its own layout.
func checkStructured(format string) error {
	if format == "" || slices.Contains(StructuredFormats, format) {
		return nil
	}
	return unknownFormat(format, StructuredFormats)
}

func unknownFormat(format string, allowed []string) error {
	return fmt.Errorf("unknown output format %q: use one of %s", format, strings.Join(allowed, ", "))
}

// ageSince is how kubectl shows the age of an object: 5m, 3h2m, 12d.
func ageSince(t time.Time, now time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(t))
}
