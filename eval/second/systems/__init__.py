"""The systems the second generator builds worlds from, one domain each."""

from __future__ import annotations

from eval.second.catalog import System
from eval.second.systems.cards import CARDS
from eval.second.systems.food import FOOD
from eval.second.systems.parcels import PARCELS
from eval.second.systems.streaming import STREAMING

SYSTEMS: tuple[System, ...] = (STREAMING, FOOD, PARCELS, CARDS)
