package msgcheck

type blockTree uint8 // where a payload's content trees start

const (
	noBlocks         blockTree = iota
	blocksAtTop                // "content" is an array of blocks (tools/call)
	blocksInMessages           // each "messages" element's "content" is a block or an array of them
)

// The containers a content tree is made of, in the order a scan enters them.
type treeNode uint8

const (
	nodeOutside treeNode = iota
	nodePayload
	nodeMessages // blocksInMessages: the payload's "messages"
	nodeMessage  // one of its elements
	nodeBlock    // a content block: counted
	nodeBlocks   // an array of blocks: each element counted
)

// contentBlocks counts the content blocks of the trees tree locates in the
// well-formed JSON object obj, no further than limit+1. Blocks nest: go-sdk's
// wireContent's "content" is an array of blocks again (mcp/content.go).
func contentBlocks(obj []byte, tree blockTree, limit int) int {
	if tree == noBlocks {
		return 0
	}
	total, depth := 0, 0
	chain := make([]treeNode, 0, 16) // the kinds of the containers at depths 1..len(chain), the tree's
	keyed := false                   // the last key in the chain's innermost object leads on
	expecting := false               // the chain's innermost blocks array awaits an element
	count := func() {
		if expecting {
			total++
			expecting = false
		}
	}
	for i, end := range tokens(obj) {
		if total > limit {
			break
		}
		c, inner := obj[i], nodeOutside
		if depth > 0 && depth == len(chain) {
			inner = chain[depth-1]
		}
		switch c {
		case '"':
			switch inner {
			case nodePayload, nodeMessage, nodeBlock:
				keyed = isKey(obj, i, end, leadKey(inner, tree))
			case nodeBlocks:
				count()
			}
		case '{', '[':
			next := nodeOutside
			switch inner {
			case nodeOutside:
				if depth == 0 {
					if c != '{' {
						return 0
					}
					next = nodePayload
				}
			case nodePayload:
				if keyed && c == '[' {
					next = nodeMessages
					if tree == blocksAtTop {
						next = nodeBlocks
					}
				}
			case nodeMessages:
				if c == '{' {
					next = nodeMessage
				}
			case nodeMessage:
				if keyed {
					next = nodeBlocks
					if c == '{' {
						next = nodeBlock
						total++ // a message's one block
					}
				}
			case nodeBlock:
				if keyed && c == '[' {
					next = nodeBlocks
				}
			case nodeBlocks:
				count()
				if c == '{' {
					next = nodeBlock
				}
			}
			depth++
			if next != nodeOutside {
				chain = append(chain, next)
				expecting = next == nodeBlocks
			}
			keyed = false
		case '}', ']':
			if depth == len(chain) {
				chain = chain[:depth-1]
			}
			depth--
			keyed, expecting = false, false
		case ',':
			if inner == nodeBlocks {
				expecting = true
			}
			keyed = false
		default: // a number, true, false or null
			if inner == nodeBlocks {
				count()
			}
			keyed = false
		}
	}
	return total
}

// leadKey is the key of a chain object whose value leads down the tree.
func leadKey(n treeNode, tree blockTree) string {
	if n == nodePayload && tree == blocksInMessages {
		return "messages"
	}
	return "content"
}

// inputRequestsKey holds a result's input requests (the 2026-07-28 multi
// round-trip). go-sdk decodes them with encoding/json, whose keys match in
// any letter case, so [objectsUnder] counts every object in it.
const inputRequestsKey = "inputRequests"

// objectsUnder counts the JSON objects within the values of key at the top
// level of the well-formed JSON object obj, no further than limit+1.
func objectsUnder(obj []byte, key string, limit int) int {
	total := 0
	for v := range keyValues(obj, key) {
		for i := range tokens(v) {
			if v[i] == '{' {
				if total++; total > limit {
					return total
				}
			}
		}
	}
	return total
}
