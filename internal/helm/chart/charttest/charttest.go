package charttest

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"slices"
	"strings"
)

// Archive returns a chart archive (.tgz) named name at version with the
// given files (paths relative to the chart, such as "templates/cm.yaml"
// or "values.yaml"). Chart.yaml is written unless files has one.
func Archive(name, version string, files map[string]string) []byte {
	all := map[string]string{}
	for k, v := range files {
		all[k] = v
	}
	if _, ok := all["Chart.yaml"]; !ok {
		all["Chart.yaml"] = fmt.Sprintf("apiVersion: v2\nname: %s\nversion: %s\nappVersion: %q\n", name, version, version)
	}
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	keys := make([]string, 0, len(all))
	for k := range all {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		body := all[k]
		if err := tw.WriteHeader(&tar.Header{Name: name + "/" + strings.TrimPrefix(k, "/"), Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg}); err != nil {
			panic(err)
		}
		if _, err := tw.Write([]byte(body)); err != nil {
			panic(err)
		}
	}
	if err := tw.Close(); err != nil {
		panic(err)
	}
	if err := gz.Close(); err != nil {
		panic(err)
	}
	return buf.Bytes()
}

// ConfigMapChart is a chart of a ConfigMap named after the release whose
// data.greeting is .Values.greeting (default "hello"), and, when
// .Values.extra is true, a second ConfigMap "<release>-extra".
func ConfigMapChart(name, version string) []byte {
	return Archive(name, version, configMapFiles())
}

// ConfigMapChartWithoutExtra is ConfigMapChart without its second
// template: a new version of the chart that dropped one.
func ConfigMapChartWithoutExtra(name, version string) []byte {
	files := configMapFiles()
	delete(files, "templates/extra.yaml")
	return Archive(name, version, files)
}

func configMapFiles() map[string]string {
	return map[string]string{
		"values.yaml": "greeting: hello\nextra: true\n",
		"templates/cm.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-config
data:
  greeting: {{ .Values.greeting | quote }}
  chart: {{ .Chart.Name }}-{{ .Chart.Version }}
`,
		"templates/extra.yaml": `{{- if .Values.extra }}
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-extra
data:
  revision: {{ .Release.Revision | quote }}
{{- end }}
`,
		"templates/NOTES.txt": "Thank you for installing {{ .Chart.Name }}.\n",
	}
}
