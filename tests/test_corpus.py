from support import corpus_files


def test_corpus_present(corpus):
    """Guards every test parametrized over ``corpus_files``: with no corpus those collect nothing."""
    assert corpus_files("**/*.nif"), f"no .nif files under {corpus}"
