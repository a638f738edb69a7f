"""The Ethereum semantic layer: semantic.yaml's metrics and conventions, plus the well-known tokens, NFT collections,
block builders and contracts of well_known.json as entities, so a question naming USDC or Titan is shown the address
to filter on (and, for tokens, that amounts take the decimals from the tokens table)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from askchain.semantic import Entry, Layer, load_layer
from askchain.semantic.layer import Check

HERE = Path(__file__).parent


def _on(field: str, value: str) -> dict:
    """The governed filter a question naming a well-known token or collection (by symbol, as the verified examples
    write it) or a builder (by address) sets on a semantic query."""
    return {"field": field, "op": "=", "value": value}


def entities(known: dict, amount_checks: tuple[Check, ...] = ()) -> list[Entry]:
    """Entries for the well-known addresses; a token's carry the token-amount checks (decimals from `tokens`); a
    token's and a collection's the filter on its symbol, a builder's on its address, that a semantic query naming it
    takes (a small model ranks every token's transfers for "the address that received the most USDC")."""
    made = []
    for token in known["erc20"]:
        made.append(Entry(
            name=f"token_{token['symbol']}", kind="entity", terms=(token["symbol"], token["name"]),
            definition=(f"{token['symbol']} ({token['name']}): ERC-20 token_address = '{token['address']}'; "
                        "its amounts use tokens.decimals (JOIN tokens tk ON tk.address = tt.token_address)"),
            checks=amount_checks, filter=_on("token_symbol", token["symbol"]),
        ))
    for nft in known["erc721"]:
        if nft["symbol"]:
            made.append(Entry(
                name=f"nft_{nft['symbol']}", kind="entity", terms=(nft["symbol"], nft["name"]),
                definition=f"{nft['name']} ({nft['symbol']}): ERC-721 collection, token_address = '{nft['address']}'",
                filter=_on("token_symbol", nft["symbol"]),
            ))
    for builder in known["fee_recipients"]:
        short = builder["name"].split(" (")[0]
        made.append(Entry(
            name=f"builder_{short}", kind="entity", terms=(short,),
            definition=f"{builder['name']}: block builder, blocks.miner = '{builder['address']}'",
            filter=_on("miner", builder["address"]),
        ))
    for router in known["routers"]:
        made.append(Entry(
            name=f"contract_{router['name']}", kind="entity", terms=(router["name"],),
            definition=f"{router['name']}: contract, transactions.to_address = '{router['address']}'",
        ))
    market = known["marketplace"]
    made.append(Entry(
        name="contract_opensea", kind="entity", terms=("OpenSea", "Seaport"),
        definition=f"{market['name']}: NFT marketplace contract, transactions.to_address = '{market['address']}'",
    ))
    made.append(Entry(
        name="contract_deposit", kind="entity", terms=("deposit contract", "staking deposits", "beacon deposit"),
        definition=f"the beacon chain deposit contract: to_address = '{known['staking']['deposit_contract']}'",
    ))
    return made


def semantic_layer() -> Layer:
    known = json.loads((HERE / "well_known.json").read_text())
    layer = load_layer(HERE / "semantic.yaml")
    amount = next(entry for entry in layer.entries if entry.name == "token_amount")
    return replace(layer, entries=layer.entries + entities(known, amount.checks))
