package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/supervisor"
)

// The refusal names the field by its JSON name, as
// supervisor.ResumeStateError documents, also for a field of the embedded
// wire state given a value of the wrong type.
func TestResumeFileRefusalNamesTheJSONField(t *testing.T) {
	path := filepath.Join(t.TempDir(), "session.json")
	require.NoError(t, os.WriteFile(path, []byte(`{"version":1,"session_id":42,"protocol_version":"2025-11-25"}`), 0o600))
	_, err := loadResume(path, "http://127.0.0.1:1/mcp")
	var rse *supervisor.ResumeStateError
	require.ErrorAs(t, err, &rse)
	assert.Equal(t, "session_id", rse.Field)
}

func TestSaveResumeWithoutAStateRemovesTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "session.json")
	require.NoError(t, os.WriteFile(path, []byte(`{}`), 0o600))
	var out bytes.Buffer
	require.NoError(t, saveResume(path, nil, &out))
	assert.NoFileExists(t, path)
	assert.Contains(t, out.String(), "no session to resume")

	require.NoError(t, saveResume("", nil, &out), "no -resume: nothing to do")
}

func TestLoadResumeOfAMissingFileIsAFreshStart(t *testing.T) {
	rs, err := loadResume(filepath.Join(t.TempDir(), "absent.json"), "http://127.0.0.1:1/mcp")
	require.NoError(t, err)
	assert.Nil(t, rs)
}
