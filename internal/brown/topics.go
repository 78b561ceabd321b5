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

// LDA is the corpus as flat token arrays for latent Dirichlet allocation
// (examples/topics-flat.pydt, examples/topics.pydt): the words of every
// text in one vector, with each token's text in another, over a
// vocabulary restricted to the most frequent content words, and a
// held-out split for document completion.
type LDA struct {
	VocabTop, Every int
	Vocab           []string // the word of id i at Vocab[i-1]: the VocabTop most frequent words of Topics.Vocab
	// Train holds the observed tokens: every kept token of a training text
	// and the first half of each held-out text's; Test the second halves
	// of the held-out texts, to be scored. W are word ids 1..len(Vocab),
	// Doc text numbers 1..M in the order of Topics.DocIDs.
	TrainW, TrainDoc, TestW, TestDoc []int
	HeldOut                          []bool // per text
	Topics                           *Topics
}

// LDA restricts the vocabulary to the vocabTop most frequent words (the
// ids 1..vocabTop of tp.Vocab, which is ordered by frequency; stop words
// and rare words are already out) and drops the other tokens; every
// every-th text (texts every, 2·every, ... in corpus order, so each
// category is represented) is held out for document completion: its
// first half of kept tokens (rounded down) is observed with the training
// texts, its second half is the test set.
func (tp *Topics) LDA(vocabTop, every int) (*LDA, error) {
	if vocabTop < 1 {
		return nil, fmt.Errorf("lda: a vocabulary of %d words", vocabTop)
	}
	if every < 2 {
		return nil, fmt.Errorf("lda: holding out every %d-th text leaves no training texts", every)
	}
	vocabTop = min(vocabTop, len(tp.Vocab.Words))
	l := &LDA{VocabTop: vocabTop, Every: every, Vocab: slices.Clone(tp.Vocab.Words[:vocabTop]), Topics: tp}
	for m, ids := range tp.Tokens {
		var kept []int
		for _, id := range ids {
			if id <= vocabTop {
				kept = append(kept, id)
			}
		}
		held := (m+1)%every == 0
		l.HeldOut = append(l.HeldOut, held)
		half := len(kept)
		if held {
			half = len(kept) / 2
		}
		for i, id := range kept {
			if i < half {
				l.TrainW = append(l.TrainW, id)
				l.TrainDoc = append(l.TrainDoc, m+1)
			} else {
				l.TestW = append(l.TestW, id)
				l.TestDoc = append(l.TestDoc, m+1)
			}
		}
	}
	if len(l.TestW) == 0 {
		return nil, fmt.Errorf("lda: the held-out texts have no tokens to score")
	}
	return l, nil
}

// Write writes the LDA files into dir (created if needed): vocab.txt (the
// word of id i on line i), w.csv and doc.csv (headers w and doc: the
// observed tokens' word ids and text numbers, one a line), test-w.csv and
// test-doc.csv (the same for the held-out tokens), docs.csv (header
// doc,category,heldout: each text's id, category 1..15 and 1 when held
// out), categories.txt and info.txt.
func (l *LDA) Write(dir string) error {
	var docs bytes.Buffer
	docs.WriteString("doc,category,heldout\n")
	held := 0
	for m, id := range l.Topics.DocIDs {
		h := 0
		if l.HeldOut[m] {
			h = 1
			held++
		}
		fmt.Fprintf(&docs, "%s,%d,%d\n", id, l.Topics.DocCategory[m], h)
	}
	info := fmt.Sprintf("%d texts (%d held out: the texts whose number is a multiple of %d), %d categories\n"+
		"vocabulary: the %d most frequent words after punctuation, the %d most frequent words and words seen fewer than %d times are dropped\n"+
		"%d observed tokens (w.csv), %d held-out tokens to score (test-w.csv: the second half of each held-out text)\n",
		len(l.Topics.DocIDs), held, l.Every, len(l.Topics.Categories), len(l.Vocab), l.Topics.StopTop, l.Topics.MinCount, len(l.TrainW), len(l.TestW))
	return writeFiles(dir, []file{
		{"vocab.txt", lines(l.Vocab)},
		{"w.csv", column("w", l.TrainW)},
		{"doc.csv", column("doc", l.TrainDoc)},
		{"test-w.csv", column("w", l.TestW)},
		{"test-doc.csv", column("doc", l.TestDoc)},
		{"docs.csv", docs.Bytes()},
		{"categories.txt", lines(l.Topics.Categories)},
		{"info.txt", []byte(info)},
	})
}
