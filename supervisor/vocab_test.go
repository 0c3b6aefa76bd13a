package supervisor

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// constants returns, for the non-test Go files of dir, the constants
// declared with an explicit type (typed: name by type name) and those whose
// value is a selector pkg.Name (aliases: "pkg.Name" by constant name).
func constants(t *testing.T, dir string) (typed map[string][]string, aliases map[string]string) {
	t.Helper()
	typed, aliases = map[string][]string{}, map[string]string{}
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	require.NoError(t, err)
	fset := token.NewFileSet()
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		require.NoError(t, err)
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, spec := range g.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, name := range vs.Names {
					if id, ok := vs.Type.(*ast.Ident); ok {
						typed[id.Name] = append(typed[id.Name], name.Name)
					}
					if i < len(vs.Values) {
						if sel, ok := vs.Values[i].(*ast.SelectorExpr); ok {
							if pkg, ok := sel.X.(*ast.Ident); ok {
								aliases[name.Name] = pkg.Name + "." + sel.Sel.Name
							}
						}
					}
				}
			}
		}
	}
	return typed, aliases
}

// Every state and reason of package events is re-exported here, so a host
// reads State, WaitForState and Failure with this package alone (vocab.go):
// a constant added to events and forgotten here fails.
func TestVocabularyReExportsEveryValue(t *testing.T) {
	evTyped, _ := constants(t, "../events")
	_, fsmAliases := constants(t, "../fsm")
	_, ours := constants(t, ".")
	reached := map[string]bool{}
	for _, target := range ours {
		reached[target] = true
		if via, ok := fsmAliases[strings.TrimPrefix(target, "fsm.")]; ok && strings.HasPrefix(target, "fsm.") {
			reached[via] = true // fsm re-exports events' value
		}
	}
	for _, typ := range []string{"State", "Reason"} {
		require.NotEmpty(t, evTyped[typ], "events declares %s constants", typ)
		for _, name := range evTyped[typ] {
			assert.True(t, reached["events."+name], "events.%s is not re-exported by package supervisor", name)
		}
	}
}
