"""Fixtures for the evaluation harness: a small Spider-format set over the fixture database for the runner's own
behaviour, and Spider dev from the shared data for what only the real set shows (spider_root: tests/conftest.py)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

# Questions with their gold SQL over the fixture database, in Spider's dev.json format; the first is a plain count.
SAMPLE_QUESTIONS = [
    ("How many singers are there?", "SELECT count(*) FROM singer"),
    ("List the names of all singers from France.", "SELECT Name FROM singer WHERE Country = 'France'"),
    ("What is the average age of singers from France?", "SELECT avg(Age) FROM singer WHERE Country = 'France'"),
    ("Show the song name and release year of the youngest singer.",
     "SELECT Song_Name, Song_release_year FROM singer ORDER BY Age LIMIT 1"),
    ("How many singers are there in each country?", "SELECT Country, count(*) FROM singer GROUP BY Country"),
    ("Which countries have singers older than 40?", "SELECT DISTINCT Country FROM singer WHERE Age > 40"),
    ("How many stadiums are there?", "SELECT count(*) FROM stadium"),
    ("What is the name of the stadium with the largest capacity?", "SELECT Name FROM stadium ORDER BY Capacity DESC LIMIT 1"),
    ("What is the average capacity of the stadiums?", "SELECT avg(Capacity) FROM stadium"),
    ("List the locations of stadiums with a capacity between 3000 and 5000.",
     "SELECT Location FROM stadium WHERE Capacity BETWEEN 3000 AND 5000"),
    ("What are the largest and smallest stadium capacities?", "SELECT max(Capacity), min(Capacity) FROM stadium"),
    ("How many concerts were held in 2014?", "SELECT count(*) FROM concert WHERE Year = '2014'"),
    ("How many concerts were held in each year?", "SELECT Year, count(*) FROM concert GROUP BY Year"),
    ("Show each concert's name with its stadium's name.",
     "SELECT T1.concert_Name, T2.Name FROM concert AS T1 JOIN stadium AS T2 ON T1.Stadium_ID = T2.Stadium_ID"),
    ("Which stadium held the most concerts?",
     "SELECT T2.Name FROM concert AS T1 JOIN stadium AS T2 ON T1.Stadium_ID = T2.Stadium_ID "
     "GROUP BY T1.Stadium_ID ORDER BY count(*) DESC LIMIT 1"),
    ("How many singers performed in each concert?",
     "SELECT T2.concert_Name, count(*) FROM singer_in_concert AS T1 JOIN concert AS T2 ON T1.concert_ID = T2.concert_ID "
     "GROUP BY T1.concert_ID"),
    ("Which singers performed in a concert in 2014?",
     "SELECT DISTINCT T3.Name FROM singer_in_concert AS T1 JOIN concert AS T2 ON T1.concert_ID = T2.concert_ID "
     "JOIN singer AS T3 ON T1.Singer_ID = T3.Singer_ID WHERE T2.Year = '2014'"),
    ("List the songs of singers older than the average singer.",
     "SELECT Song_Name FROM singer WHERE Age > (SELECT avg(Age) FROM singer)"),
    ("Show the singers' names from the oldest to the youngest.", "SELECT Name FROM singer ORDER BY Age DESC"),
    ("What are the themes of the concerts held in 2015?", "SELECT Theme FROM concert WHERE Year = '2015'"),
    ("How many male singers are there?", "SELECT count(*) FROM singer WHERE Is_male = 'T'"),
    ("What is the highest attendance at the stadium in Harbour Town?",
     "SELECT Highest FROM stadium WHERE Location = 'Harbour Town'"),
    ("Who sang the song Soleil?", "SELECT Name FROM singer WHERE Song_Name = 'Soleil'"),
    ("Show the name and average attendance of stadiums holding more than 10000 people.",
     "SELECT Name, Average FROM stadium WHERE Capacity > 10000"),
    ("How many singers are younger than 30?", "SELECT count(*) FROM singer WHERE Age < 30"),
]


@pytest.fixture(scope="session")
def spider_sample_root(tmp_path_factory, concert_db) -> Path:
    """A Spider-format folder (dev.json, database/<db_id>/<db_id>.sqlite) of SAMPLE_QUESTIONS."""
    root = tmp_path_factory.mktemp("spider-sample")
    (root / "database" / "concert_singer").mkdir(parents=True)
    shutil.copy(concert_db, root / "database" / "concert_singer" / "concert_singer.sqlite")
    entries = [{"db_id": "concert_singer", "question": q, "query": sql} for q, sql in SAMPLE_QUESTIONS]
    (root / "dev.json").write_text(json.dumps(entries, indent=1))
    return root


@pytest.fixture(scope="session")
def spider(spider_sample_root):
    """The sample loaded as Spider dev is: what the runner, reports and audits do needs no more than this."""
    from askchain.eval.datasets import load_spider

    return load_spider(spider_sample_root)


@pytest.fixture(scope="session")
def real_spider(spider_root):
    """Spider dev from the shared data, loaded once (hardness levels are computed for all 1034 questions)."""
    from askchain.eval.datasets import load_spider

    return load_spider(spider_root)
