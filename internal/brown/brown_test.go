package brown

import (
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

func TestParseDocument(t *testing.T) {
	cases := []struct {
		name, in string
		want     [][]Token
		err      string
	}{
		{"two sentences", "\n\n\tThe/at Dog/nn-tl\n\n\n\tran/vbd ./.\n", [][]Token{
			{{"the", "at"}, {"dog", "nn-tl"}}, {{"ran", "vbd"}, {".", "."}}}, ""},
		{"slash in word", "1-1/2/cd 4-7/8%/nn", [][]Token{{{"1-1/2", "cd"}, {"4-7/8%", "nn"}}}, ""},
		{"empty", "\n \n\t\n", nil, ""},
		{"no tag", "\tthe/at dog\n", nil, "x:1: token \"dog\" is not word/tag"},
		{"empty word", "the/at\n/nn\n", nil, "x:2: token \"/nn\""},
		{"empty tag", "the/\n", nil, "x:1: token \"the/\""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseDocument(strings.NewReader(tc.in), "x")
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			for i := range got {
				if !slices.Equal(got[i], tc.want[i]) {
					t.Errorf("sentence %d: %v, want %v", i, got[i], tc.want[i])
				}
			}
		})
	}
	if _, err := ParseDocument(strings.NewReader(strings.Repeat("a", maxLine+10)), "long"); err == nil {
		t.Error("over-long line: no error")
	}
}

func TestBaseTag(t *testing.T) {
	for in, want := range map[string]string{
		"nn": "nn", "nn-tl": "nn", "nn-tl-hl": "nn", "fw-nn": "nn", "fw-nn-tl": "nn",
		"np$": "np$", "md*": "md*", "ppss+md": "ppss+md", "-": "-", "--": "--", ".-hl": ".", "nn-nc": "nn",
		"fw-": "fw-", "-tl": "-tl",
	} {
		if got := BaseTag(in); got != want {
			t.Errorf("BaseTag(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestFixture converts the tiny corpus in testdata/corpus and compares
// every file written with testdata/golden (go test -update rewrites them),
// and checks the round trip: word ids and tag ids map back to the corpus.
func TestFixture(t *testing.T) {
	docs, err := ReadCorpus("testdata/corpus")
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) != 3 || docs[2].ID != "cb01" || docs[2].Category != "editorial" {
		t.Fatalf("read %d texts: %+v", len(docs), docs)
	}
	tg, err := BuildTagging(docs, "news", 2)
	if err != nil {
		t.Fatal(err)
	}
	// Round trip: each token's word (or UNK) and tag come back from ids.
	var toks []Token
	for _, d := range docs[:2] {
		for _, s := range d.Sentences {
			toks = append(toks, s...)
		}
	}
	if len(tg.Words) != len(toks) || len(tg.Tags) != len(toks) || len(tg.Base) != len(toks) {
		t.Fatalf("%d words, %d tags for %d tokens", len(tg.Words), len(tg.Tags), len(toks))
	}
	count := map[string]int{}
	for _, tk := range toks {
		count[tk.Word]++
	}
	unk := 0
	for i, tk := range toks {
		w := tg.Vocab.Words[tg.Words[i]-1]
		if count[tk.Word] >= 2 && w != tk.Word || count[tk.Word] < 2 && w != UNK {
			t.Errorf("token %d %q has word %q", i, tk.Word, w)
		}
		if w == UNK {
			unk++
		}
		if tg.Tagset[tg.Tags[i]-1] != tk.Tag || tg.BaseTagset[tg.Base[i]-1] != BaseTag(tk.Tag) {
			t.Errorf("token %d tag %q comes back as %q / %q", i, tk.Tag, tg.Tagset[tg.Tags[i]-1], tg.BaseTagset[tg.Base[i]-1])
		}
	}
	if unk != tg.NumUNK {
		t.Errorf("NumUNK = %d, counted %d", tg.NumUNK, unk)
	}
	tp, err := BuildTopics(docs, 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	// "the" (7 times) is the one stop word; words seen once are dropped.
	if !slices.Equal(tp.Stop, []string{"the"}) {
		t.Errorf("stop words %v", tp.Stop)
	}
	if !slices.Equal(tp.Categories, []string{"editorial", "news"}) || !slices.Equal(tp.DocCategory, []int{2, 2, 1}) {
		t.Errorf("categories %v %v", tp.Categories, tp.DocCategory)
	}
	// Flat arrays: the 4 most frequent content words, text 2 held out; its
	// kept tokens split in halves, every other text's observed whole.
	lda, err := tp.LDA(4, 2)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(lda.Vocab, tp.Vocab.Words[:4]) || !slices.Equal(lda.HeldOut, []bool{false, true, false}) {
		t.Errorf("vocabulary %v, held out %v", lda.Vocab, lda.HeldOut)
	}
	for m, ids := range tp.Tokens {
		var kept, train, test []int
		for _, id := range ids {
			if id <= 4 {
				kept = append(kept, id)
			}
		}
		for i, d := range lda.TrainDoc {
			if d == m+1 {
				train = append(train, lda.TrainW[i])
			}
		}
		for i, d := range lda.TestDoc {
			if d == m+1 {
				test = append(test, lda.TestW[i])
			}
		}
		if !slices.Equal(append(slices.Clone(train), test...), kept) || lda.HeldOut[m] && len(train) != len(kept)/2 || !lda.HeldOut[m] && len(test) > 0 {
			t.Errorf("text %d: kept %v, observed %v, held out %v", m+1, kept, train, test)
		}
	}
	out := t.TempDir()
	if err := tg.Write(filepath.Join(out, "news")); err != nil {
		t.Fatal(err)
	}
	if err := tp.Write(filepath.Join(out, "topics")); err != nil {
		t.Fatal(err)
	}
	if err := lda.Write(filepath.Join(out, "lda")); err != nil {
		t.Fatal(err)
	}
	back, err := ReadTagging(filepath.Join(out, "news"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(back.Words, tg.Words) || !slices.Equal(back.Tags, tg.Tags) || !slices.Equal(back.Base, tg.Base) ||
		!slices.Equal(back.Vocab.Words, tg.Vocab.Words) || !slices.Equal(back.Tagset, tg.Tagset) ||
		!slices.Equal(back.BaseTagset, tg.BaseTagset) || back.NumUNK != tg.NumUNK || back.Vocab.ID("jury") != tg.Vocab.ID("jury") {
		t.Errorf("ReadTagging does not give back what Write wrote")
	}
	for _, sub := range []string{"news", "topics", "lda"} {
		ents, err := os.ReadDir(filepath.Join(out, sub))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			got, err := os.ReadFile(filepath.Join(out, sub, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", "golden", sub, e.Name())
			if *update {
				if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update)", err)
			}
			if string(got) != string(want) {
				t.Errorf("%s differs from %s:\n%s\nwant:\n%s", e.Name(), golden, got, want)
			}
		}
	}
}

func TestErrors(t *testing.T) {
	write := func(t *testing.T, files map[string]string) string {
		dir := t.TempDir()
		for n, s := range files {
			if err := os.WriteFile(filepath.Join(dir, n), []byte(s), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	cases := []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"no cats.txt", map[string]string{}, "cats.txt"},
		{"empty cats.txt", map[string]string{"cats.txt": "\n"}, "lists no texts"},
		{"bad line", map[string]string{"cats.txt": "ca01\n"}, "cats.txt:1: want \"file category\""},
		{"missing text", map[string]string{"cats.txt": "ca01 news\n"}, "ca01"},
		{"path escape", map[string]string{"cats.txt": "../x news\n"}, "is not a file name"},
		{"listed twice", map[string]string{"cats.txt": "ca01 news\nca01 news\n", "ca01": "a/at\n"}, "cats.txt:2: text ca01 listed twice"},
		{"bad token", map[string]string{"cats.txt": "ca01 news\n", "ca01": "\n\ta/at b\n"}, "ca01:2: token \"b\" is not word/tag"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadCorpus(write(t, tc.files))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
	docs, err := ReadCorpus("testdata/corpus")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := BuildTagging(docs, "romance", 1); err == nil || !strings.Contains(err.Error(), `no text of category "romance" (the categories are editorial, news)`) {
		t.Errorf("unknown category: %v", err)
	}
	tp, err := BuildTopics(docs, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ vocab, every int }{{0, 5}, {10, 1}, {10, 100}} {
		if _, err := tp.LDA(c.vocab, c.every); err == nil {
			t.Errorf("LDA(%d, %d): no error", c.vocab, c.every)
		}
	}
	if _, err := BuildTopics(docs, 1, -1); err == nil {
		t.Error("negative stop words: no error")
	}
}

func TestReadTaggingErrors(t *testing.T) {
	docs, err := ReadCorpus("testdata/corpus")
	if err != nil {
		t.Fatal(err)
	}
	tg, err := BuildTagging(docs, "news", 2)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		file, content, want string
	}{
		{"words.csv", "w\n1\n7\n", "words.csv:3: \"7\" is not an id in 1..6"},
		{"words.csv", "x\n1\n", "words.csv:1: header \"x\", want \"w\""},
		{"tags.csv", "tag\n1\n", "32 words, 1 tags"},
		{"basetags.csv", "tag\n0\n", "\"0\" is not an id"},
		{"tagset.txt", "", "tagset.txt is empty"},
		{"vocab.txt", "", "vocab.txt is empty"},
	}
	for _, tc := range cases {
		dir := t.TempDir()
		if err := tg.Write(dir); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, tc.file), []byte(tc.content), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadTagging(dir); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s = %q: error %v, want %q", tc.file, tc.content, err, tc.want)
		}
	}
	if _, err := ReadTagging(t.TempDir()); err == nil {
		t.Error("empty directory: no error")
	}
}
