package brown

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"unicode"
)

// Topics is the corpus as bags of words for a topic model, with each
// text's category kept apart.
type Topics struct {
	MinCount, StopTop int
	Vocab             *Vocab   // no UNK: dropped words have no id
	Stop              []string // the StopTop most frequent words, dropped
	DocIDs            []string
	Categories        []string // sorted
	DocCategory       []int    // 1-based index into Categories
	Tokens            [][]int  // each text's kept words, as ids, in order
}

// isPunct reports whether a tag is punctuation: its base has no letter
// (".", ",", "“", "--", "(", ...; also "*", the tag of "not").
func isPunct(tag string) bool {
	return !strings.ContainsFunc(BaseTag(tag), unicode.IsLetter)
}

// BuildTopics makes the bags of words of every text: punctuation tokens
// are dropped, then the stopTop most frequent words of the whole corpus
// (stop words) and the words seen fewer than minCount times in it; the
// rest are numbered most frequent first.
func BuildTopics(docs []*Document, minCount, stopTop int) (*Topics, error) {
	if stopTop < 0 {
		return nil, fmt.Errorf("topics: %d stop words", stopTop)
	}
	if len(docs) == 0 {
		return nil, fmt.Errorf("topics: no texts")
	}
	counts := map[string]int{}
	for _, d := range docs {
		for _, s := range d.Sentences {
			for _, tk := range s {
				if !isPunct(tk.Tag) {
					counts[tk.Word]++
				}
			}
		}
	}
	tp := &Topics{MinCount: minCount, StopTop: stopTop}
	ranked := rank(counts)
	tp.Stop = slices.Clone(ranked[:min(stopTop, len(ranked))])
	for _, w := range tp.Stop {
		delete(counts, w)
	}
	tp.Vocab = newVocab(counts, minCount, "")
	catID := map[string]int{}
	for _, d := range docs {
		if _, ok := catID[d.Category]; !ok {
			catID[d.Category] = 0
			tp.Categories = append(tp.Categories, d.Category)
		}
	}
	slices.Sort(tp.Categories)
	for i, c := range tp.Categories {
		catID[c] = i + 1
	}
	for _, d := range docs {
		var ids []int
		for _, s := range d.Sentences {
			for _, tk := range s {
				if isPunct(tk.Tag) {
					continue
				}
				if id := tp.Vocab.ID(tk.Word); id > 0 {
					ids = append(ids, id)
				}
			}
		}
		tp.DocIDs = append(tp.DocIDs, d.ID)
		tp.DocCategory = append(tp.DocCategory, catID[d.Category])
		tp.Tokens = append(tp.Tokens, ids)
	}
	return tp, nil
}

// Write writes the topic-model files into dir (created if needed):
// vocab.txt (word of id i on line i), docword.csv (header doc,word,count:
// one line per text and word present, 1-based, sorted), tokens.csv (one
// row per text: its id as the row label, then its word ids in order,
// padded with NA to the longest text), docs.csv (header doc,category: the
// 1-based category of each text), categories.txt, stopwords.txt and
// info.txt.
func (tp *Topics) Write(dir string) error {
	var docword, tokens, docs bytes.Buffer
	docword.WriteString("doc,word,count\n")
	docs.WriteString("doc,category\n")
	L, total := 0, 0
	for _, ids := range tp.Tokens {
		L = max(L, len(ids))
		total += len(ids)
	}
	counts := make([]int, len(tp.Vocab.Words)+1)
	for m, ids := range tp.Tokens {
		clear(counts)
		for _, id := range ids {
			counts[id]++
		}
		for id, n := range counts {
			if n > 0 {
				fmt.Fprintf(&docword, "%d,%d,%d\n", m+1, id, n)
			}
		}
		tokens.WriteString(tp.DocIDs[m])
		for _, id := range ids {
			fmt.Fprintf(&tokens, ",%d", id)
		}
		for range L - len(ids) {
			tokens.WriteString(",NA")
		}
		tokens.WriteByte('\n')
		fmt.Fprintf(&docs, "%s,%d\n", tp.DocIDs[m], tp.DocCategory[m])
	}
	info := fmt.Sprintf("%d texts, %d categories, %d tokens kept (longest text %d)\n"+
		"vocabulary: %d words (punctuation, the %d most frequent words and words seen fewer than %d times dropped)\n",
		len(tp.DocIDs), len(tp.Categories), total, L, len(tp.Vocab.Words), tp.StopTop, tp.MinCount)
	return writeFiles(dir, []file{
		{"vocab.txt", lines(tp.Vocab.Words)},
		{"docword.csv", docword.Bytes()},
		{"tokens.csv", tokens.Bytes()},
		{"docs.csv", docs.Bytes()},
		{"categories.txt", lines(tp.Categories)},
		{"stopwords.txt", lines(tp.Stop)},
		{"info.txt", []byte(info)},
	})
}
