"""What hearth says in Korean: its fixed phrases and its tools' templates filled with kitchen values.

Each line is written as hearth writes it (digits included: the voice spells them).  The source
is named beside each group, so a changed template can be found and the line updated.
"""

from __future__ import annotations

SENTENCES: tuple[tuple[str, str], ...] = (
    # agent/speaking/phrases.py
    ("phrases", "아무 말도 들리지 않았어요. 버튼을 누르고 다시 말해 주세요."),
    ("phrases", "죄송해요, 잘 못 알아들었어요."),
    ("phrases", "죄송해요, 그건 답을 드릴 수 없어요."),
    ("phrases", "죄송해요, 문제가 생겼어요. 다시 해 주세요."),
    ("phrases", "죄송해요, 말씀을 듣다가 문제가 생겼어요. 다시 해 주세요."),
    ("phrases", "죄송해요, 대답을 만들다가 문제가 생겼어요. 다시 해 주세요."),
    ("phrases", "죄송해요, 목소리에 문제가 생겼어요. 다시 해 주세요."),
    ("phrases", "죄송해요, 잘 못 들었어요. 다시 한 번 말해 주세요."),
    # agent/deciding/tool_use.py
    ("tool_use", "레시피를 찾아볼게요."),
    ("tool_use", "날씨 확인해 볼게요."),
    ("tool_use", "미세먼지 확인해 볼게요."),
    ("tool_use", "잠깐만요, 확인해 볼게요."),
    ("tool_use", "죄송해요, 아직 그건 못 해요."),
    ("tool_use", "죄송해요, 내용을 잘 못 들었어요. 다시 말해 주세요."),
    ("tool_use", "죄송해요, 너무 오래 걸렸어요. 다시 해 주세요."),
    ("tool_use", "죄송해요, 저장 공간이 꽉 차서 저장하지 못했어요."),
    ("tool_use", "직접 말씀하시기 전에는 그렇게 하지 않을게요."),
    ("tool_use", "제가 제대로 들었는지 모르겠어요. 다시 말해 주세요."),
    ("tool_use", "죄송해요, 타이머에 문제가 생겼어요. 다시 해 주세요."),
    # agent/deciding/confirm.py
    ("confirm", "장보기 목록에 뭘 넣을까요?"),
    ("confirm", "파스타 타이머를 얼마나 맞출까요?"),
    ("confirm", "10분 타이머 맞출까요?"),
    ("confirm", "모든 타이머를 취소할까요?"),
    ("confirm", "장보기 목록에 두부 넣을까요?"),
    ("confirm", "알겠어요, 안 할게요."),
    ("confirm", "메모로 남길까요?"),
    # tools/timers.py
    ("timers", "파스타 타이머를 10분에 맞췄어요."),
    ("timers", "5분 타이머를 맞췄어요."),
    ("timers", "1시간 30분 타이머를 맞췄어요."),
    ("timers", "계란 타이머가 끝났어요."),
    ("timers", "파스타 타이머는 7분 30초 남았어요."),
    ("timers", "타이머가 2개 있어요: 파스타, 계란. 어느 타이머 말씀이세요?"),
    ("timers", "라면 타이머는 없어요. 지금 있는 타이머는 파스타예요."),
    ("timers", "지금 맞춰 둔 타이머가 없어요."),
    ("timers", "계란 타이머를 취소했어요."),
    ("timers", "타이머 3개를 모두 취소했어요."),
    ("timers", "파스타 타이머에 2분을 더했어요. 8분 남았어요."),
    ("timers", "빵 타이머를 멈췄어요. 12분 남았어요."),
    ("timers", "꺼져 있는 동안 빵 타이머가 끝났어요. 3분 전이에요."),
    # tools/lists.py
    ("lists", "장보기 목록에 우유 2리터를 추가했어요."),
    ("lists", "계란은 이미 장보기 목록에 있어요."),
    ("lists", "장보기 목록에서 양파를 지웠어요."),
    ("lists", "장보기 목록이 비어 있어요."),
    ("lists", "장보기 목록에 3개가 있어요: 우유, 계란, 두부."),
    ("lists", "사과는 목록에 없어요. 혹시 배 말씀이세요?"),
    ("lists", "당근은 이미 목록에 있어요. 수량을 3개로 바꿨어요."),
    # tools/clock.py
    ("clock", "지금은 오후 3시 5분이에요."),
    ("clock", "오늘은 11월 30일 월요일이에요."),
    # tools/weather_speech.py
    ("weather", "내일 서울 날씨: 구름 많음, 최저 3도, 최고 11도, 강수 확률 60퍼센트."),
    ("weather", "실내는 22도, 습도 45퍼센트예요."),
    ("weather", "바깥 미세먼지는 보통이에요. 초미세먼지 18, 미세먼지 35마이크로그램이에요."),
    ("weather", "아직 날씨 정보가 없어요."),
    ("weather", "2시간 전 기준 예보라 지금과 다를 수 있어요."),
    ("weather", "오늘 밤 부산 날씨: 비, 최저 영하 2도."),
    # tools/convert.py
    ("convert", "밀가루 한 컵은 약 120그램이에요."),
    ("convert", "섭씨 180도는 화씨 356도예요."),
    ("convert", "버터 200그램은 약 한 컵 반이에요."),
    ("convert", "온도와 무게는 서로 바꿀 수 없어요."),
    # tools/recipes.py, tools/recipe_reading.py and the recipes in recipes/
    ("recipes", "된장찌개 레시피를 찾았어요. 25분 걸려요."),
    ("recipes", "저녁으로 김치찌개 어때요? 30분이면 돼요."),
    ("recipes", "된장찌개, 2인분이에요. 재료는 된장 2큰술, 감자 1개, 두부 반 모."),
    ("recipes", "1단계예요. 육수에 된장을 풀고 감자를 넣어 5분 끓인다."),
    ("recipes", "2단계예요. 냄비에 돼지고기와 김치를 넣고 5분 정도 볶는다."),
    ("recipes", "마지막 3단계예요. 두부와 고추를 넣고 한소끔 끓여 낸다. 5분 타이머를 맞출까요?"),
    ("recipes", "떡과 어묵을 넣고 중불에서 10분 끓인다."),
    ("recipes", "미역을 물에 20분 불려 먹기 좋게 자른다."),
    ("recipes", "마지막 단계까지 다 읽었어요. 맛있게 드세요!"),
    ("recipes", "읽고 있는 레시피가 없어요. 떡볶이 레시피 읽어 줘처럼 말해 주세요."),
)
"""(source, text) pairs: 68 lines."""
