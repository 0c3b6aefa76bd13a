package msgcheck

import (
	"encoding/json"
	"strings"
	"testing"

	segjson "github.com/segmentio/encoding/json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/mcpsup/mcpsup/internal/jsonscan"
)

// refBlock is what go-sdk's wireContent decodes of a block's tree.
type refBlock struct {
	Content []*refBlock `json:"content"`
}

func (b *refBlock) nodes() int {
	n := 1
	for _, c := range b.Content {
		n += c.nodes()
	}
	return n
}

// refBlocks counts the blocks as go-sdk decodes them (its decoder, its
// flags), the reference contentBlocks is held to.
func refBlocks(t require.TestingT, payload []byte, tree blockTree) int {
	n := 0
	switch tree {
	case blocksAtTop:
		var r struct {
			Content []*refBlock `json:"content"`
		}
		_, err := segjson.Parse(payload, &r, jsonscan.DecodeFlags)
		require.NoError(t, err)
		for _, b := range r.Content {
			n += b.nodes()
		}
	case blocksInMessages:
		var r struct {
			Messages []struct {
				Content segjson.RawMessage `json:"content"`
			} `json:"messages"`
		}
		_, err := segjson.Parse(payload, &r, jsonscan.DecodeFlags)
		require.NoError(t, err)
		for _, m := range r.Messages {
			raw := strings.TrimSpace(string(m.Content))
			switch {
			case strings.HasPrefix(raw, "["):
				var bs []*refBlock
				_, err := segjson.Parse([]byte(raw), &bs, jsonscan.DecodeFlags)
				require.NoError(t, err)
				for _, b := range bs {
					n += b.nodes()
				}
			case strings.HasPrefix(raw, "{"):
				var b refBlock
				_, err := segjson.Parse([]byte(raw), &b, jsonscan.DecodeFlags)
				require.NoError(t, err)
				n += b.nodes()
			}
		}
	}
	return n
}

// genBlock draws a content block whose tree is at most depth deep, with
// members that hold "content" keys go-sdk does not decode as blocks.
func genBlock(t *rapid.T, depth int) string {
	sp := func() string { return rapid.SampledFrom([]string{"", " ", "\n\t"}).Draw(t, "sp") }
	members := []string{`"type":` + sp() + rapid.SampledFrom([]string{`"text"`, `"tool_result"`, `"content"`}).Draw(t, "type")}
	if rapid.Bool().Draw(t, "text") {
		members = append(members, `"text":"content\"],[{"`)
	}
	if rapid.Bool().Draw(t, "structured") {
		members = append(members, `"structuredContent":{"content":[{},{},{"content":[{}]}]}`)
	}
	if rapid.Bool().Draw(t, "meta") {
		members = append(members, `"_meta":{"content":[{}]}`, `"Content":[{},{}]`)
	}
	if depth > 0 && rapid.Bool().Draw(t, "nested") {
		n := rapid.IntRange(0, 4).Draw(t, "n")
		var kids []string
		for range n {
			kids = append(kids, genBlock(t, depth-1))
		}
		members = append(members, `"content":`+sp()+`[`+sp()+strings.Join(kids, ","+sp())+`]`)
	}
	perm := rapid.Permutation(members).Draw(t, "order")
	return "{" + sp() + strings.Join(perm, ","+sp()) + sp() + "}"
}

// TestContentBlocksCountsWhatGoSDKDecodes: on random trees of blocks,
// nested in tool_result blocks or not, with "content" keys where go-sdk
// decodes no block (structuredContent, _meta, another case), as a
// tools/call result or as the messages of a prompt, the count is the
// number of blocks go-sdk's decoder makes.
func TestContentBlocksCountsWhatGoSDKDecodes(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var blocks []string
		for range rapid.IntRange(0, 5).Draw(t, "blocks") {
			blocks = append(blocks, genBlock(t, 3))
		}
		array := "[" + strings.Join(blocks, ",") + "]"
		call := []byte(`{"structuredContent":{"content":[1]},"content":` + array + `,"isError":false}`)
		require.True(t, json.Valid(call), "%s", call)
		assert.Equal(t, refBlocks(t, call, blocksAtTop), contentBlocks(call, blocksAtTop, 1<<20), "%s", call)

		var messages []string
		for _, b := range blocks {
			content := b
			if rapid.Bool().Draw(t, "as array") {
				content = "[" + b + "," + b + "]"
			}
			messages = append(messages, `{"role":"user","content":`+content+`}`)
		}
		prompt := []byte(`{"description":"content","messages":[` + strings.Join(messages, ",") + `]}`)
		require.True(t, json.Valid(prompt), "%s", prompt)
		assert.Equal(t, refBlocks(t, prompt, blocksInMessages), contentBlocks(prompt, blocksInMessages, 1<<20), "%s", prompt)
	})
}

// The cases a generator does not draw: keys written with escapes and
// repeated (each is decoded in turn: counted each), elements that are no
// object, and the bound, past which the count stops.
func TestContentBlocksEdges(t *testing.T) {
	for _, c := range []struct {
		payload string
		tree    blockTree
		want    int
	}{
		{`{"cont\u0065nt":[{},{}]}`, blocksAtTop, 2},
		{`{"content":[{}],"content":[{},{}]}`, blocksAtTop, 3},
		{`{"content":[1,"x",[{}],null,{}]}`, blocksAtTop, 5},
		{`{"content":[{"type":"text","content":[{},{"content":[{}]}]}]}`, blocksAtTop, 4},
		{`{"content":[]}`, blocksAtTop, 0},
		{`{"content":{"content":[{}]}}`, blocksAtTop, 0},
		{`{"messages":[{"content":{"type":"tool_result","content":[{},{}]}}]}`, blocksInMessages, 3},
		{`{"messages":[{"content":[{},{"content":[{}]}]},{"content":{}}]}`, blocksInMessages, 4},
		{`{"content":[{}],"messages":[]}`, blocksInMessages, 0},
		{`{"content":[` + strings.Repeat("{},", 99) + `{}]}`, blocksAtTop, 11}, // limit 10: stops at 11
	} {
		assert.Equal(t, c.want, contentBlocks([]byte(c.payload), c.tree, 10), c.payload)
	}
	nested := []byte(`{"content":[{"type":"tool_result","content":[{},{}]}]}`)
	assert.Zero(t, testing.AllocsPerRun(10, func() { contentBlocks(nested, blocksAtTop, 10) }))
}

// go-sdk decodes a result's inputRequests with encoding/json, keys in any
// letter case (a sampling request's "MESSAGES" is its messages): every
// object in them counts, each occurrence of the key, escaped too; objects
// elsewhere do not.
func TestObjectsUnderCountsEveryObjectOfTheKey(t *testing.T) {
	for _, c := range []struct {
		payload string
		want    int
	}{
		{`{"content":[{},{}],"inputRequests":{"a":{"METHOD":"sampling/createMessage","Params":{"MESSAGES":[{"content":[{},{}]}]}}}}`, 6},
		{`{"inputRequests":{},"inputRequests":{"a":{}}}`, 3},
		{`{"input\u0052equests":{"a":{"b":"{not an object}"}}}`, 2},
		{`{"x":{"inputRequests":{"a":{}}},"inputRequests":[]}`, 0},
		{`{"inputRequests":{` + strings.Repeat(`"a":{},`, 50) + `"b":{}}}`, 11}, // limit 10: stops at 11
	} {
		assert.Equal(t, c.want, objectsUnder([]byte(c.payload), inputRequestsKey, 10), c.payload)
	}
	sampling := `{"content":[],"inputRequests":{"a":{"method":"sampling/createMessage","params":{"maxTokens":1,"messages":[{"role":"user","content":[` +
		strings.TrimSuffix(strings.Repeat(`{"type":"text","text":"x"},`, 20), ",") + `]}]}}}}`
	l := Limits{InputRequestObjects: 10}
	assert.Equal(t, "tools/call result with more than 10 objects in inputRequests", l.Problem("tools/call", nil, []byte(sampling)))
	assert.Equal(t, "prompts/get with more than 10 objects in inputRequests", l.Problem("prompts/get", nil, []byte(sampling)))
	assert.Empty(t, Limits{InputRequestObjects: 30}.Problem("tools/call", nil, []byte(sampling)))
	assert.Empty(t, Limits{ContentBlocks: 10}.Problem("tools/call", nil, []byte(sampling)), "a bound of its own")
	// Empty messages, each decoded by go-sdk with two decoders of its own:
	// 9,997 in 150 KB allocated 628 MiB; the default bound refuses them.
	empty := `{"content":[],"inputRequests":{"a":{"method":"sampling/createMessage","params":{"maxTokens":1,"messages":[` +
		strings.TrimSuffix(strings.Repeat(`{"content":[]},`, 9997), ",") + `]}}}}`
	assert.Equal(t, "tools/call result with more than 1000 objects in inputRequests",
		Limits{}.WithDefaults().Problem("tools/call", nil, []byte(empty)))
}
