package cli

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/render"
)

// LoadDefinitions reads ComponentDefinitions, TraitDefinitions and
// PolicyDefinitions from YAML files. Each path is a file or a directory
// whose *.yaml, *.yml and *.json files are read (not recursively). Other
// kinds are skipped; the same definition twice is an error.
func LoadDefinitions(paths ...string) (render.Definitions, error) {
	defs := render.Definitions{
		Components: map[string]*v1beta1.ComponentDefinition{},
		Traits:     map[string]*v1beta1.TraitDefinition{},
		Policies:   map[string]*v1beta1.PolicyDefinition{},
	}
	for _, p := range paths {
		files, err := yamlFiles(p)
		if err != nil {
			return defs, err
		}
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				return defs, fmt.Errorf("read definitions: %w", err)
			}
			if err := DecodeDefinitions(data, &defs); err != nil {
				return defs, fmt.Errorf("%s: %w", f, err)
			}
		}
	}
	return defs, nil
}

// DecodeDefinitions adds the definitions of a multi-document YAML stream to
// defs, whose maps must not be nil.
func DecodeDefinitions(data []byte, defs *render.Definitions) error {
	docs, err := splitYAML(data)
	if err != nil {
		return err
	}
	for _, doc := range docs {
		var head struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
		}
		if err := yaml.Unmarshal(doc, &head); err != nil {
			return fmt.Errorf("decode document: %w", err)
		}
		name := head.Metadata.Name
		switch head.Kind {
		case "ComponentDefinition":
			err = addDefinition(defs.Components, name, head.Kind, doc)
		case "TraitDefinition":
			err = addDefinition(defs.Traits, name, head.Kind, doc)
		case "PolicyDefinition":
			err = addDefinition(defs.Policies, name, head.Kind, doc)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func addDefinition[T any](into map[string]*T, name, kind string, doc []byte) error {
	if name == "" {
		return fmt.Errorf("%s without metadata.name", kind)
	}
	if _, dup := into[name]; dup {
		return fmt.Errorf("%s %q is defined twice", kind, name)
	}
	obj := new(T)
	if err := yaml.Unmarshal(doc, obj); err != nil {
		return fmt.Errorf("decode %s %q: %w", kind, name, err)
	}
	into[name] = obj
	return nil
}

// LoadApplication reads one Application from a YAML file. An Application
// without a namespace renders into "default".
func LoadApplication(path string) (*v1beta1.Application, error) {
	return loadApplicationIn(path, "default")
}

// splitYAML splits a multi-document YAML stream, dropping empty documents.
func splitYAML(data []byte) ([][]byte, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var docs [][]byte
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("split yaml documents: %w", err)
		}
		if len(bytes.TrimSpace(stripComments(doc))) > 0 {
			docs = append(docs, doc)
		}
	}
}

func stripComments(doc []byte) []byte {
	var out []byte
	for _, line := range bytes.Split(doc, []byte("\n")) {
		if !bytes.HasPrefix(bytes.TrimSpace(line), []byte("#")) {
			out = append(out, line...)
			out = append(out, '\n')
		}
	}
	return out
}

// yamlFiles lists the YAML files of a path, sorted.
func yamlFiles(path string) ([]string, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("read definitions: %w", err)
	}
	if !info.IsDir() {
		return []string{path}, nil
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		return nil, fmt.Errorf("read definitions: %w", err)
	}
	var files []string
	for _, e := range entries {
		ext := strings.ToLower(filepath.Ext(e.Name()))
		if !e.IsDir() && (ext == ".yaml" || ext == ".yml" || ext == ".json") {
			files = append(files, filepath.Join(path, e.Name()))
		}
	}
	sort.Strings(files)
	return files, nil
}
