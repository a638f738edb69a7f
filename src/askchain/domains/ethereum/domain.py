"""The Ethereum domain as askchain sees it: the plugin registered under the `askchain.domains` entry point group.

Light on purpose: the engine, the dataset builder and the CLI are imported when first asked for.
"""

from __future__ import annotations

from functools import cache, cached_property
from pathlib import Path

from askchain.domain import Domain
from askchain.domains.ethereum import DOMAIN_ID

HERE = Path(__file__).parent


class EthereumDomain(Domain):
    name = DOMAIN_ID
    command = "eth"
    # The question bank is both: its `pool` rows are the example pool, its `test` rows (held-out template families,
    # which retrieval never reads) the evaluation set.
    example_files = (HERE / "eval" / "questions.jsonl",)
    eval_file = HERE / "eval" / "questions.jsonl"
    schema_file = HERE / "schema.json"
    not_in_data_file = HERE / "not_in_data.yaml"
    unanswerable_file = HERE / "eval" / "unanswerable.jsonl"
    bigquery_dataset = "bigquery-public-data.crypto_ethereum"
    semantic_model_file = HERE / "semantic_model.yaml"
    semantic_examples_file = HERE / "semantic_examples.jsonl"

    @cached_property
    def tables(self) -> frozenset[str]:
        from askchain.domains.ethereum.tables import tables

        return frozenset(tables())

    def notes(self) -> str:
        from askchain.domains.ethereum.tables import knowledge

        return knowledge()

    def engine(self, location, limits, **options):
        from askchain.domains.ethereum.engine import EthereumEngine

        return EthereumEngine(location, limits, notes=self.notes(), **options)

    def default_database(self, settings):
        from askchain.domains.ethereum.dataset import default_engine

        return default_engine(settings)

    def schema_database(self, directory, settings):
        """One day at a hundredth of mainnet's rate (about a second to build): the schema prompt shows the domain's
        fixed example values and no row counts, so it is the default dataset's."""
        from askchain.domains.ethereum.dataset import build_dataset

        path = Path(directory) / "schema_sample.duckdb"
        build_dataset(path, days=1, scale=0.01, progress=False)
        return self.engine(str(path), settings.db)

    @cache
    def semantic_layer(self):
        from askchain.domains.ethereum.semantic import semantic_layer

        return semantic_layer()

    @cache
    def rules(self):
        from askchain.domains.ethereum.rules import layer_rules
        from askchain.rules.repairs.unasked_flags import UnaskedFlags
        from askchain.semantic.governed.naming import flag_columns

        return (*layer_rules(self.semantic_layer()), UnaskedFlags(flag_columns(self.semantic_model())))

    def cli(self):
        from askchain.domains.ethereum.cli import app

        return app
