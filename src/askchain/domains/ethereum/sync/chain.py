"""What the chain is asked about beyond the blocks: the code of new contracts (their function selectors say ERC-20
or ERC-721, as ethereum-etl reads them), token metadata by eth_call, tolerant of tokens that answer otherwise than
the standard (bytes32 names, a missing decimals(), reverts: a value the token does not give is NULL), and ether
balances by eth_getBalance."""

from __future__ import annotations

from functools import lru_cache

from askchain.domains.ethereum.sync.derive import Row, quantity
from askchain.domains.ethereum.sync.rpc import RpcClient, RpcError
from askchain.errors import require

ERC20 = ("totalSupply()", "balanceOf(address)", "transfer(address,uint256)", "transferFrom(address,address,uint256)",
         "approve(address,uint256)", "allowance(address,address)")
ERC721 = ("balanceOf(address)", "ownerOf(uint256)", "transferFrom(address,address,uint256)",
          "safeTransferFrom(address,address,uint256)", "safeTransferFrom(address,address,uint256,bytes)",
          "approve(address,uint256)", "setApprovalForAll(address,bool)", "getApproved(uint256)",
          "isApprovedForAll(address,address)")
#: tokens table column -> the call that answers it and the ABI type it is read as
TOKEN_CALLS = {"name": ("name()", "string"), "symbol": ("symbol()", "string"), "decimals": ("decimals()", "uint8"),
               "total_supply": ("totalSupply()", "uint256")}
PUSH1, PUSH4, PUSH32 = 0x60, 0x63, 0x7F


@lru_cache(maxsize=None)
def selector(signature: str) -> str:
    eth_utils = require("eth_utils", "chain")
    return "0x" + eth_utils.function_signature_to_4byte_selector(signature).hex()


def function_sighashes(bytecode: str) -> list[str]:
    """The 4-byte operands of PUSH4 instructions (a contract's dispatcher compares the call's selector with each),
    walking the code so PUSH data is never read as instructions."""
    code = bytes.fromhex(bytecode[2:] if bytecode.startswith("0x") else bytecode)
    found, at = set(), 0
    while at < len(code):
        op = code[at]
        if op == PUSH4 and at + 5 <= len(code):
            found.add("0x" + code[at + 1:at + 5].hex())
        at += 1 + (op - PUSH1 + 1 if PUSH1 <= op <= PUSH32 else 0)
    found.discard("0xffffffff")
    return sorted(found)


def contract_rows(client: RpcClient, created: dict[str, tuple[int, str, str]]) -> list[Row]:
    """contracts rows for newly created addresses: their code as of their creation block."""
    if not created:
        return []
    addresses = sorted(created)
    codes = client.batch([("eth_getCode", [a, hex(created[a][0])]) for a in addresses], tolerate=True)
    rows = []
    for address, code in zip(addresses, codes):
        bytecode = code if isinstance(code, str) else None
        sighashes = function_sighashes(bytecode) if bytecode else []
        number, timestamp, block_hash = created[address]
        rows.append({"address": address, "bytecode": bytecode, "function_sighashes": sighashes,
                     "is_erc20": {selector(s) for s in ERC20} <= set(sighashes),
                     "is_erc721": {selector(s) for s in ERC721} <= set(sighashes),
                     "block_timestamp": timestamp, "block_number": number, "block_hash": block_hash})
    return rows


def token_rows(client: RpcClient, addresses: list[str], block: int, created: dict[str, tuple[int, str, str]]) -> list[Row]:
    """tokens rows for `addresses`, read at `block`; a token created in the synced range carries its creation block,
    one created before it none."""
    if not addresses:
        return []
    calls = [("eth_call", [{"to": a, "data": selector(TOKEN_CALLS[c][0])}, hex(block)]) for a in addresses for c in TOKEN_CALLS]
    answers = iter(client.batch(calls, tolerate=True))
    rows = []
    for address in addresses:
        row: Row = {"address": address}
        for column, (_, abi_type) in TOKEN_CALLS.items():
            value = decode_token_value(next(answers), abi_type)
            row[column] = None if value is None else str(value)
        number, timestamp, block_hash = created.get(address, (None, None, None))
        rows.append({**row, "block_timestamp": timestamp, "block_number": number, "block_hash": block_hash})
    return rows


def decode_token_value(answer, abi_type: str):
    """An eth_call's answer read as `abi_type`; a string that a token returns as bytes32 is read up to its first
    zero byte; a revert, an empty answer or one that decodes to nothing readable is None."""
    if isinstance(answer, RpcError) or not isinstance(answer, str) or len(answer) <= 2:
        return None
    data = bytes.fromhex(answer[2:])
    eth_abi = require("eth_abi", "chain")
    try:
        value = eth_abi.decode([abi_type], data)[0]
    except Exception:  # eth_abi's decoding errors share no base class beyond Exception
        value = None
    if abi_type == "string" and value is None and len(data) == 32:
        value = data.split(b"\0", 1)[0].decode("utf-8", "replace")
    if isinstance(value, str):
        value = value.replace("\0", "").strip() or None
    return value


def balance_rows(client: RpcClient, addresses: list[str], block: int) -> list[Row]:
    """balances rows: each address's ether balance (wei) at `block`."""
    answers = client.batch([("eth_getBalance", [a, hex(block)]) for a in addresses])
    return [{"address": a, "eth_balance": str(quantity(b))} for a, b in zip(addresses, answers)]
